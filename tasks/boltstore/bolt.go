package boltstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wasmcp/wasmcp/tasks"
)

var (
	bucketTasks  = []byte("tasks")  // id → JSON record
	bucketOwners = []byte("owners") // owner 0x00 order key → nil
)

// ErrLocked is the error of Open when another process holds the file.
var ErrLocked = errors.New("tasks: the store file is in use by another process")

// Store is a tasks.Store in a bbolt file: records survive a restart. One process
// at a time may open the file.
type Store struct {
	db *bolt.DB
}

// Open opens (creating it and its directory if needed) the store in
// the file at path. It fails at once with ErrLocked when another process
// holds the file.
func Open(path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("tasks: data directory %s: %w", filepath.Dir(path), err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Millisecond})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, path)
		}
		return nil, fmt.Errorf("tasks: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bucketTasks); err != nil {
			return err
		}
		_, err := tx.CreateBucketIfNotExists(bucketOwners)
		return err
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("tasks: initialise %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// Path is the store's file.
func (b *Store) Path() string { return b.db.Path() }

func ownerKey(owner, order string) []byte {
	k := make([]byte, 0, len(owner)+1+len(order))
	k = append(k, owner...)
	k = append(k, 0)
	return append(k, order...)
}

func decode(id string, v []byte) (*tasks.Task, error) {
	var t tasks.Task
	if err := json.Unmarshal(v, &t); err != nil {
		return nil, fmt.Errorf("tasks: record %s is corrupt: %w", id, err)
	}
	return &t, nil
}

func closedErr(err error) error {
	if errors.Is(err, bolt.ErrDatabaseNotOpen) {
		return tasks.ErrClosed
	}
	return err
}

// Create implements tasks.Store.
func (b *Store) Create(_ context.Context, t *tasks.Task) error {
	v, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("tasks: encode %s: %w", t.ID, err)
	}
	return closedErr(b.db.Update(func(tx *bolt.Tx) error {
		tb := tx.Bucket(bucketTasks)
		if tb.Get([]byte(t.ID)) != nil {
			return tasks.ErrExists
		}
		if err := tb.Put([]byte(t.ID), v); err != nil {
			return err
		}
		return tx.Bucket(bucketOwners).Put(ownerKey(t.Owner, t.OrderKey()), nil)
	}))
}

// Get implements tasks.Store.
func (b *Store) Get(_ context.Context, id string) (*tasks.Task, error) {
	var t *tasks.Task
	err := b.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketTasks).Get([]byte(id))
		if v == nil {
			return tasks.ErrNotFound
		}
		var err error
		t, err = decode(id, v)
		return err
	})
	return t, closedErr(err)
}

// Update implements tasks.Store.
func (b *Store) Update(_ context.Context, id string, fn func(*tasks.Task) error) (*tasks.Task, error) {
	var out *tasks.Task
	err := b.db.Update(func(tx *bolt.Tx) error {
		tb := tx.Bucket(bucketTasks)
		v := tb.Get([]byte(id))
		if v == nil {
			return tasks.ErrNotFound
		}
		t, err := decode(id, v)
		if err != nil {
			return err
		}
		owner, created := t.Owner, t.CreatedAt
		if err := fn(t); err != nil {
			return err
		}
		t.ID, t.Owner, t.CreatedAt = id, owner, created
		nv, err := json.Marshal(t)
		if err != nil {
			return fmt.Errorf("tasks: encode %s: %w", id, err)
		}
		out = t
		return tb.Put([]byte(id), nv)
	})
	if err != nil {
		return nil, closedErr(err)
	}
	return out.Clone(), nil
}

// Delete implements tasks.Store.
func (b *Store) Delete(_ context.Context, id string) error {
	return closedErr(b.db.Update(func(tx *bolt.Tx) error {
		tb := tx.Bucket(bucketTasks)
		v := tb.Get([]byte(id))
		if v == nil {
			return nil
		}
		t, err := decode(id, v)
		if err == nil {
			if err := tx.Bucket(bucketOwners).Delete(ownerKey(t.Owner, t.OrderKey())); err != nil {
				return err
			}
		}
		return tb.Delete([]byte(id))
	}))
}

// List implements tasks.Store.
func (b *Store) List(_ context.Context, owner, after string, limit int) ([]*tasks.Task, error) {
	var out []*tasks.Task
	prefix := ownerKey(owner, "")
	err := b.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketOwners).Cursor()
		k, _ := c.Seek(ownerKey(owner, after))
		if after != "" && k != nil && string(k) == string(ownerKey(owner, after)) {
			k, _ = c.Next()
		}
		tb := tx.Bucket(bucketTasks)
		for ; k != nil && len(out) < limit && len(k) > len(prefix)+16 && string(k[:len(prefix)]) == string(prefix); k, _ = c.Next() {
			id := string(k[len(prefix)+16:])
			v := tb.Get([]byte(id))
			if v == nil {
				continue
			}
			t, err := decode(id, v)
			if err != nil {
				return err
			}
			out = append(out, t)
		}
		return nil
	})
	return out, closedErr(err)
}

// Scan implements tasks.Store.
func (b *Store) Scan(_ context.Context, fn func(*tasks.Task) bool) error {
	var all []*tasks.Task
	err := b.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketTasks).ForEach(func(k, v []byte) error {
			t, err := decode(string(k), v)
			if err != nil {
				return err
			}
			all = append(all, t)
			return nil
		})
	})
	if err != nil {
		return closedErr(err)
	}
	for _, t := range all {
		if !fn(t) {
			break
		}
	}
	return nil
}

// Close implements tasks.Store.
func (b *Store) Close() error { return b.db.Close() }
