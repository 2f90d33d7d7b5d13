################################################################################
#
# fieldtap
#
################################################################################

FIELDTAP_VERSION = 0.1.0
FIELDTAP_SITE = $(BR2_EXTERNAL_FIELDTAP_PATH)/..
FIELDTAP_SITE_METHOD = local
FIELDTAP_LICENSE = PROPRIETARY

FIELDTAP_GOMOD = fieldtap
FIELDTAP_BUILD_TARGETS = firmware/cmd/fieldtapd tools/cmd/fieldtap
FIELDTAP_LDFLAGS = -X main.version=$(FIELDTAP_VERSION)
# Pure Go everywhere: no libc dependency, the same binary on any libc.
FIELDTAP_GO_ENV = CGO_ENABLED=0

# The build runs with -mod=vendor and GOPROXY=off, and a local site gets
# no download post-processing, so vendor/ is made right after the rsync,
# with the host Go that golang-package depends on (hence extract-time).
FIELDTAP_EXTRACT_DEPENDENCIES = host-go

define FIELDTAP_GO_MOD_VENDOR
	cd $(@D) && GOTOOLCHAIN=local GOFLAGS=-mod=mod \
		GOPATH=$(HOST_GO_GOPATH) GOMODCACHE=$(HOST_GO_GOPATH)/pkg/mod \
		$(GO_BIN) mod vendor
endef
FIELDTAP_POST_RSYNC_HOOKS += FIELDTAP_GO_MOD_VENDOR

FIELDTAP_BOARD = $(call qstrip,$(BR2_PACKAGE_FIELDTAP_BOARD))

# The home directory, /var/lib/fieldtap, is created owned by fieldtap: the
# recorder, evidence bundles, captures and DBC files live under it.
define FIELDTAP_USERS
	fieldtap -1 fieldtap -1 * /var/lib/fieldtap - dialout,gpio fieldtap capture daemon
endef

define FIELDTAP_INSTALL_CONFIG
	$(INSTALL) -D -m 0644 $(FIELDTAP_PKGDIR)/fieldtapd.toml \
		$(TARGET_DIR)/etc/fieldtap/fieldtapd.toml
	$(SED) 's/@BOARD@/$(FIELDTAP_BOARD)/' $(TARGET_DIR)/etc/fieldtap/fieldtapd.toml
endef
FIELDTAP_POST_INSTALL_TARGET_HOOKS += FIELDTAP_INSTALL_CONFIG

define FIELDTAP_INSTALL_INIT_SYSV
	$(INSTALL) -D -m 0755 $(FIELDTAP_PKGDIR)/S90fieldtapd \
		$(TARGET_DIR)/etc/init.d/S90fieldtapd
endef

define FIELDTAP_INSTALL_INIT_SYSTEMD
	$(INSTALL) -D -m 0644 $(FIELDTAP_PKGDIR)/fieldtapd.service \
		$(TARGET_DIR)/usr/lib/systemd/system/fieldtapd.service
endef

$(eval $(golang-package))
