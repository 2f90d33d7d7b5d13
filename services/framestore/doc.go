// Package framestore keeps the most recent raw frames of one port in a
// bounded ring, for export and for analysers that look back.
//
// Frame bytes are copied into 32 KiB slabs, one allocation per few
// hundred frames instead of one per frame, and the slabs hold no pointers
// the collector must scan; a slab whose frames are all evicted, and that
// no snapshot ever showed, is filled again (ring.Slabs). A record costs its ring slot plus its bytes;
// the store's byte bound is its share of the memory budget.
package framestore
