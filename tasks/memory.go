package tasks

import (
	"context"
	"sort"
	"sync"
)

// Memory is a Store in memory: records live as long as the process.
type Memory struct {
	mu     sync.Mutex
	tasks  map[string]*Task
	owners map[string][]string // owner → order keys, sorted
	closed bool
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{tasks: map[string]*Task{}, owners: map[string][]string{}}
}

// Create implements Store.
func (m *Memory) Create(_ context.Context, t *Task) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if _, ok := m.tasks[t.ID]; ok {
		return ErrExists
	}
	m.tasks[t.ID] = t.Clone()
	keys := m.owners[t.Owner]
	k := t.OrderKey()
	i := sort.SearchStrings(keys, k)
	keys = append(keys, "")
	copy(keys[i+1:], keys[i:])
	keys[i] = k
	m.owners[t.Owner] = keys
	return nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, id string) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	t, ok := m.tasks[id]
	if !ok {
		return nil, ErrNotFound
	}
	return t.Clone(), nil
}

// Update implements Store.
func (m *Memory) Update(_ context.Context, id string, fn func(*Task) error) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	t, ok := m.tasks[id]
	if !ok {
		return nil, ErrNotFound
	}
	c := t.Clone()
	if err := fn(c); err != nil {
		return nil, err
	}
	// Identity and order never change.
	c.ID, c.Owner, c.CreatedAt = t.ID, t.Owner, t.CreatedAt
	m.tasks[id] = c
	return c.Clone(), nil
}

// Delete implements Store.
func (m *Memory) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	t, ok := m.tasks[id]
	if !ok {
		return nil
	}
	delete(m.tasks, id)
	keys := m.owners[t.Owner]
	k := t.OrderKey()
	if i := sort.SearchStrings(keys, k); i < len(keys) && keys[i] == k {
		keys = append(keys[:i], keys[i+1:]...)
	}
	if len(keys) == 0 {
		delete(m.owners, t.Owner)
	} else {
		m.owners[t.Owner] = keys
	}
	return nil
}

// List implements Store.
func (m *Memory) List(_ context.Context, owner, after string, limit int) ([]*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	keys := m.owners[owner]
	i := 0
	if after != "" {
		i = sort.Search(len(keys), func(j int) bool { return keys[j] > after })
	}
	var out []*Task
	for ; i < len(keys) && len(out) < limit; i++ {
		out = append(out, m.tasks[keys[i][16:]].Clone())
	}
	return out, nil
}

// Scan implements Store.
func (m *Memory) Scan(_ context.Context, fn func(*Task) bool) error {
	m.mu.Lock()
	all := make([]*Task, 0, len(m.tasks))
	for _, t := range m.tasks {
		all = append(all, t.Clone())
	}
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return ErrClosed
	}
	for _, t := range all {
		if !fn(t) {
			break
		}
	}
	return nil
}

// Close implements Store.
func (m *Memory) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	return nil
}
