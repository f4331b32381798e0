package registry

import "context"

// Watch follows changes to the tools directory until ctx is done.
func (r *Registry) Watch(ctx context.Context) error {
	<-ctx.Done()
	return nil
}
