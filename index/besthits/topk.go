package besthits

import "container/heap"

// TopK holds the best K of the hits added, as Worse ranks them, in a
// heap H with the worst on top. A collector may read H (H[0] is the worst
// kept) to turn a hit away before it takes the hit's address for Worse.
type TopK[T any] struct {
	H     []T
	K     int
	Worse func(a, b *T) bool
}

// Admits reports whether c ranks among the best K so far.
func (w *TopK[T]) Admits(c *T) bool {
	return len(w.H) < w.K || (w.K > 0 && w.Worse(&w.H[0], c))
}

// Add keeps c, which Admits accepted, in place of the worst if full.
func (w *TopK[T]) Add(c T) {
	if len(w.H) < w.K {
		heap.Push(w, c)
		return
	}
	w.H[0] = c
	heap.Fix(w, 0)
}

// Drain empties w and returns what it held, best first.
func (w *TopK[T]) Drain() []T {
	out := make([]T, len(w.H))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(w).(T)
	}
	return out
}

// Len, Less, Swap, Push and Pop are heap.Interface's, for Add and Drain.
func (w *TopK[T]) Len() int           { return len(w.H) }
func (w *TopK[T]) Less(i, j int) bool { return w.Worse(&w.H[i], &w.H[j]) }
func (w *TopK[T]) Swap(i, j int)      { w.H[i], w.H[j] = w.H[j], w.H[i] }
func (w *TopK[T]) Push(v any)         { w.H = append(w.H, v.(T)) }
func (w *TopK[T]) Pop() any {
	v := w.H[len(w.H)-1]
	w.H = w.H[:len(w.H)-1]
	return v
}
