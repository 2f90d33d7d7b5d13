package mcp

import (
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/services/coverage"
	"fieldtap/services/ports"
)

// progressEvery spaces a call's progress notifications: a client learns
// the call is alive without a notification per loop turn.
const progressEvery = time.Second

// progress tells the client how far a long call got, when it asked by
// sending a progressToken (MCP notifications/progress): done of total
// (total 0 when unknown), and what the call is doing. Notifications are
// at least progressEvery apart, and done never goes backwards, as the
// specification requires; one that cannot be sent is dropped (the call's
// answer does not depend on it).
func (c *call) progress(done, total float64, message string) {
	meta := c.req.Params.Meta
	if meta == nil || meta.ProgressToken == nil {
		return
	}
	now := time.Now()
	if (!c.progressAt.IsZero() && now.Sub(c.progressAt) < progressEvery) || done < c.progressDone {
		return
	}
	srv := server.ServerFromContext(c.ctx)
	if srv == nil {
		return
	}
	params := map[string]any{"progressToken": meta.ProgressToken, "progress": done}
	if total > 0 {
		params["total"] = total
	}
	if message != "" {
		params["message"] = message
	}
	if srv.SendNotificationToClient(c.ctx, string(mcpgo.MethodNotificationProgress), params) == nil {
		c.progressAt, c.progressDone = now, done
	}
}

// pollUntil calls check every awaitPoll until it reports met, secs
// seconds pass, the ports the wait reads have all ended (ended), or the
// request is cancelled, sending progress (seconds waited of secs) with
// check's message between calls. ended is read before check, so a
// condition the last of a source's data meets is still met. It returns
// whether the deadline passed, whether the ports ended unmet, and how
// long the wait took; a cancelled wait says so in a warning and is none
// of these.
func (c *call) pollUntil(secs int, ended func() bool, check func() (met bool, msg string)) (deadlinePassed, sourceEnded bool, waited time.Duration) {
	start := time.Now()
	deadline := start.Add(time.Duration(secs) * time.Second)
	for {
		over := ended()
		met, msg := check()
		if met {
			return false, false, time.Since(start)
		}
		if over {
			return false, true, time.Since(start)
		}
		c.progress(time.Since(start).Seconds(), float64(secs), msg)
		wait := time.Until(deadline)
		if wait <= 0 {
			return true, false, time.Since(start)
		}
		select {
		case <-c.ctx.Done():
			c.warnf("the request was cancelled before the condition was met")
			return false, false, time.Since(start)
		case <-time.After(min(wait, awaitPoll)):
		}
	}
}

// portsEnded reports whether every port q reads (as the answer's
// coverage block lists them) has ended: a file read to its end, or a
// port that can never run here. Nothing more will reach the stores, so
// a wait on them would only wait out its deadline. No port is not
// ended: a wait on an empty box keeps today's meaning.
func (c *call) portsEnded(q coverage.Query) func() bool {
	return func() bool {
		ps := c.d.Coverage(q).Ports
		for _, p := range ps {
			if p.State != ports.StateEnded {
				return false
			}
		}
		return len(ps) > 0
	}
}
