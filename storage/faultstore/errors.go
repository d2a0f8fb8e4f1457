package faultstore

import "errors"

var (
	// ErrInjected is the class of every fault this package injects. A fault
	// of mode FailAfter on PutIfAbsent (the write landed, the answer was
	// lost) also matches storage.ErrCommitStateUnknown.
	ErrInjected = errors.New("injected fault")
	// ErrInvalidRule: Store.Add was given a rule that cannot work.
	ErrInvalidRule = errors.New("invalid rule")
)
