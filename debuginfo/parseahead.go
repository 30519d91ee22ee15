package debuginfo

import "sync"

// eachUnit calls fn with every unit parsed, in unit order, taking them
// from the cache or parsing them as unit does. With workers > 1, that many
// goroutines parse the units ahead of fn (at most two each ahead), each
// without holding Index.mu but for the state units share (abbreviation
// tables, line tables); a unit enters the cache, and its warnings the
// Index, in unit order, so that the cache and Warnings end as one pass in
// order leaves them.
func (ix *Index) eachUnit(workers int, fn func(u int, ui *unitIndex)) {
	n := len(ix.units)
	if workers <= 1 || n < 2 {
		for u := range n {
			fn(u, ix.unit(u))
		}
		return
	}
	type parsed struct {
		b  *unitBuilder // nil when the unit came from the cache
		ui *unitIndex
	}
	results := make([]chan parsed, n)
	for u := range results {
		results[u] = make(chan parsed, 1) // a worker never waits to hand a unit over
	}
	todo := make(chan int)
	ahead := make(chan struct{}, 2*workers) // bounds the units parsed but not yet taken
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(todo)
		for u := range n {
			select {
			case ahead <- struct{}{}:
			case <-done:
				return
			}
			select {
			case todo <- u:
			case <-done:
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := &scratch{}
			for u := range todo {
				ix.mu.Lock()
				ui, report := ix.cache.get(u), !ix.reported[u]
				ix.mu.Unlock()
				if ui != nil {
					results[u] <- parsed{ui: ui}
					continue
				}
				b := &unitBuilder{ix: ix, u: ix.units[u], lineOff: -1, report: report, sc: sc, shared: true}
				results[u] <- parsed{b: b, ui: b.parse()}
			}
		}()
	}
	for u := range n {
		p := <-results[u]
		<-ahead
		ui := p.ui
		if p.b != nil {
			ui = ix.insert(u, p.b, p.ui)
		}
		fn(u, ui)
	}
	wg.Wait()
}

// insert adds unit u, parsed by b without Index.mu, to the cache with its
// warnings, and returns it; or returns the unit a lookup parsed and cached
// meanwhile.
func (ix *Index) insert(u int, b *unitBuilder, ui *unitIndex) *unitIndex {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if cached := ix.cache.get(u); cached != nil {
		return cached
	}
	if !ix.reported[u] {
		for _, w := range b.pending {
			ix.warn.add("%s", w)
		}
		ix.warn.dropped += b.pendingDropped
	}
	ix.reported[u] = true
	if lt := ix.cache.line(b.lineOff); b.lineOff >= 0 && lt != nil && ui.lines != nil {
		// Another unit naming the same line program entered first: share
		// its table (the same rows and files) as a parse in order would.
		ui.lines = lt
	}
	ix.cache.put(u, b.lineOff, ui)
	return ui
}
