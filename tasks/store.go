package tasks

import (
	"context"
	"errors"
)

// Errors of the Store and the Manager.
var (
	// ErrNotFound: no such task (or not the caller's, or expired).
	ErrNotFound = errors.New("tasks: task not found")
	// ErrExists: a task with that id already exists.
	ErrExists = errors.New("tasks: task already exists")
	// ErrTerminal: the task already ended; its state cannot change.
	ErrTerminal = errors.New("tasks: task already ended")
	// ErrClosed: the store or manager is closed.
	ErrClosed = errors.New("tasks: closed")
)

// Store holds task records. Implementations are safe for concurrent use and
// hand out copies: a caller may keep and modify what it gets.
type Store interface {
	// Create stores a new task; ErrExists if its id is taken.
	Create(ctx context.Context, t *Task) error
	// Get returns a task; ErrNotFound if there is none.
	Get(ctx context.Context, id string) (*Task, error)
	// Update reads a task, lets fn change it and stores the result,
	// atomically with respect to other Updates of the same task. An error
	// from fn aborts the update and is returned. It returns the stored
	// task.
	Update(ctx context.Context, id string, fn func(*Task) error) (*Task, error)
	// Delete removes a task; deleting a missing task is not an error.
	Delete(ctx context.Context, id string) error
	// List returns up to limit tasks of owner in creation order, starting
	// after the task whose order key is after ("" for the first page).
	List(ctx context.Context, owner, after string, limit int) ([]*Task, error)
	// Scan calls fn for every task until fn returns false. fn must not
	// call the store.
	Scan(ctx context.Context, fn func(*Task) bool) error
	// Close releases the store.
	Close() error
}
