// Package tmpfs mounts a small RAM file system for a test, so that a full
// disk is the kernel's own ENOSPC, short writes included, rather than a
// fake writer's idea of one. Mounting needs CAP_SYS_ADMIN (root in the
// test containers); without it, or off Linux, the test is skipped with a
// message that says so.
package tmpfs
