package board

// USB identity of the gadget: the Linux Foundation's vendor id and its
// "Multifunction Composite Gadget" product id, which hosts bind to their
// class drivers (cdc_ncm, cdc_ether) without a vendor driver.
const (
	gadgetVendor  = "0x1d6b"
	gadgetProduct = "0x0104"
	gadgetName    = "fieldtap"
	// configfsRoot is where the usb_gadget configfs subsystem lives once
	// configfs is mounted and libcomposite is loaded.
	configfsRoot = "/sys/kernel/config/usb_gadget"
)

// SetupGadget creates the USB network gadget through configfs (NCM, or
// ECM when the kernel lacks NCM), binds it to the board's UDC, and gives
// its interface the profile's static address.
func SetupGadget(g Gadget) Outcome {
	const part = "gadget"
	if g.Function == "" {
		return skipped(part, "the board has no USB gadget")
	}
	fn, err := setupGadget(g)
	if err != nil {
		return failed(part, err)
	}
	return up(part+" "+g.Interface, fn+" "+g.Address)
}
