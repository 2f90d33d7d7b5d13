include $(sort $(wildcard $(BR2_EXTERNAL_FIELDTAP_PATH)/package/*/*.mk))
