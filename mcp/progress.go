package mcp

import (
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
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
// seconds pass, or the request is cancelled, sending progress (seconds
// waited of secs) with check's message between calls. It returns whether
// the deadline passed and how long the wait took; a cancelled wait says
// so in a warning and ends neither met nor past its deadline.
func (c *call) pollUntil(secs int, check func() (met bool, msg string)) (deadlinePassed bool, waited time.Duration) {
	start := time.Now()
	deadline := start.Add(time.Duration(secs) * time.Second)
	for {
		met, msg := check()
		if met {
			return false, time.Since(start)
		}
		c.progress(time.Since(start).Seconds(), float64(secs), msg)
		wait := time.Until(deadline)
		if wait <= 0 {
			return true, time.Since(start)
		}
		select {
		case <-c.ctx.Done():
			c.warnf("the request was cancelled before the condition was met")
			return false, time.Since(start)
		case <-time.After(min(wait, awaitPoll)):
		}
	}
}
