package firmware

// DroppedEnv is set in the environment of the re-executed, unprivileged
// fieldtapd, so it neither drops again nor redoes root-only bring-up.
const DroppedEnv = "FIELDTAP_PRIVDROPPED"
