package vault

import (
	"context"
	"time"

	"github.com/fsnotify/fsnotify"
)

// WatchOptions say how Watch runs.
type WatchOptions struct {
	// Rescan is how often everything is synced whatever the events say
	// (default 5 minutes): events can be missed (a full queue, a folder
	// made between two syncs, a network file system).
	Rescan time.Duration
	// Settle is how long a burst of events is let finish before the sync
	// (default 200ms): an agent appends many lines at once.
	Settle time.Duration
	// After, when not nil, is told the outcome of each sync.
	After func(SyncStats, error)
}

// Watch syncs now, then again within a second of every change in the
// folders the sources lie in (file system events, through fsnotify: the
// kernel's inotify, kqueue or ReadDirectoryChangesW), and every Rescan,
// until ctx ends. A sync that fails is reported to After and retried at
// the next event or rescan.
func Watch(ctx context.Context, v *Vault, so SyncOptions, wo WatchOptions) error {
	if wo.Rescan <= 0 {
		wo.Rescan = 5 * time.Minute
	}
	if wo.Settle <= 0 {
		wo.Settle = 200 * time.Millisecond
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	watched := map[string]bool{}
	var settle <-chan time.Time
	run := func() {
		st, err := v.Sync(ctx, so)
		if ctx.Err() != nil {
			return
		}
		added := false
		for _, d := range st.dirs {
			if !watched[d] && w.Add(d) == nil {
				watched[d], added = true, true
			}
		}
		if added && settle == nil {
			// What changed in a folder between the sync's look at it and
			// its watch raised no event: look again.
			settle = time.After(wo.Settle)
		}
		if wo.After != nil {
			wo.After(st, err)
		}
	}
	run()
	rescan := time.NewTicker(wo.Rescan)
	defer rescan.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				delete(watched, ev.Name) // a folder that went is watched again if it comes back
			}
			if settle == nil {
				settle = time.After(wo.Settle)
			}
		case _, ok := <-w.Errors:
			if !ok {
				return nil
			}
			// Events were lost (the queue overflowed): sync everything.
			if settle == nil {
				settle = time.After(wo.Settle)
			}
		case <-settle:
			settle = nil
			run()
		case <-rescan.C:
			run()
		}
	}
}
