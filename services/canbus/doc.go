// Package canbus keeps what a CAN port carried, whatever the protocol: a
// bounded frame ring per port, the ID table (count, rate, last data, which
// bytes and bits change) and bus load per second from frame bits with a
// worst-case stuffing estimate. It takes plain values (time, id, flags,
// data); it never imports drivers/.
package canbus
