package answerjson

// MaxPooled is maxPooled, for the check against mcp's budget.
const MaxPooled = maxPooled
