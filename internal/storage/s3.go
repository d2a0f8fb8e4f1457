package storage

import (
	"context"
	"fmt"
	"net/url"
)

func (o *Opener) openS3(ctx context.Context, u *url.URL) (Store, error) {
	return nil, fmt.Errorf("%w: s3 not yet implemented", ErrUnsupportedURL)
}
