// Package freeport picks a loopback port for a test to give a server it
// starts. A port the kernel chose for a listener that was then closed
// (127.0.0.1:0) lies in the ephemeral range, where any outgoing
// connection on the machine may take it before the server binds it (a
// make test run: "bind: address already in use"). The ports picked here
// lie outside that range, where the kernel hands out none on its own:
// only another explicit bind can take one, and the pick is random.
package freeport
