// Package sipfail2ban writes a fail2ban filter and jail that ban the
// source of a sip_security_findings finding on the PBX's own logs:
// Asterisk's security log (res_security_log), Kamailio's syslog lines from
// the default kamailio.cfg's anti-flood block (pike), and FreeSWITCH's
// log (sofia_reg.c). Everything it writes comes from its own templates;
// of the finding it takes only the kind (one of a fixed set), addresses
// (netip values, printed by netip) and numbers, so nothing a remote party
// wrote reaches a regex or a config line. Every failregex refuses a line
// naming the address field twice, so sender text logged before the
// address cannot plant another address to ban.
package sipfail2ban
