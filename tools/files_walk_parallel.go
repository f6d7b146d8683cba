package tools

import (
	"context"
	"io/fs"
	"sync"
)

// walkTask is a directory the parallel walk is still to list: name in
// parent (retained by the task), at path, with the .gitignore rules in
// force above it. It is opened only when a worker takes it, so that the
// queue holds a descriptor per parent, not per directory.
type walkTask struct {
	parent *walkDir
	name   string
	path   string
	stack  ignoreStack
}

// runParallel is run with directories listed and visited by workers
// goroutines at once, in no order: visit is called concurrently and must
// be safe for that. The fence's checks are run's: every directory is
// opened beneath its checked parent's handle, every name checked as it is
// listed. Directories wait on a stack, taken from its top, so that the
// walk goes depth first and holds few directories open.
func (w treeWalk) runParallel(ctx context.Context, workers int, visit visitFunc) error {
	root, stack, err := w.start(visit)
	if root == nil {
		return err
	}
	// The root is listed here: its error is the walk's.
	entries, stack, err := w.list(root, w.root, stack)
	if err != nil {
		root.release()
		return err
	}
	q := &walkQueue{}
	q.cond.L = &q.mu
	q.active = 1
	w.visitListing(ctx, q, root, w.root, entries, stack, visit)

	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				t, ok := q.take()
				if !ok {
					return
				}
				w.visitTask(ctx, q, t, visit)
			}
		})
	}
	wg.Wait()
	q.drop()
	if q.err != nil {
		return q.err
	}
	return ctx.Err()
}

// visitTask opens and lists the directory of a task and goes through it.
func (w treeWalk) visitTask(ctx context.Context, q *walkQueue, t walkTask, visit visitFunc) {
	sub, err := t.parent.OpenDir(t.name)
	t.parent.release()
	if err != nil {
		q.done(nil, nil) // refused, gone, or no longer a directory
		return
	}
	dir := newWalkDir(sub)
	entries, stack, _ := w.list(dir, t.path, t.stack)
	w.visitListing(ctx, q, dir, t.path, entries, stack, visit)
}

// visitListing visits the files of a listing and queues its directories;
// it drops the walk's reference to dir and ends the task.
func (w treeWalk) visitListing(ctx context.Context, q *walkQueue, dir *walkDir, p string, entries []fs.DirEntry, stack ignoreStack, visit visitFunc) {
	var subs []walkTask
	var err error
	for _, e := range entries {
		if err = ctx.Err(); err != nil {
			break
		}
		name := e.Name()
		child := joinName(p, name)
		if e.IsDir() {
			if !skipDir(stack, name, child) {
				dir.retain()
				subs = append(subs, walkTask{parent: dir, name: name, path: child, stack: stack})
			}
			continue
		}
		if stack.ignored(child, false) {
			continue
		}
		if err = visit(child, e, dir); err != nil {
			break
		}
	}
	dir.release()
	q.done(subs, err)
}

// walkQueue is the parallel walk's stack of directories to list.
type walkQueue struct {
	mu     sync.Mutex
	cond   sync.Cond
	tasks  []walkTask
	active int   // tasks taken and not done
	err    error // the first error of visit or the context: the walk stops
}

// take waits for a task; false when the walk is over.
func (q *walkQueue) take() (walkTask, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.tasks) == 0 && q.active > 0 && q.err == nil {
		q.cond.Wait()
	}
	if q.err != nil || len(q.tasks) == 0 {
		return walkTask{}, false
	}
	t := q.tasks[len(q.tasks)-1]
	q.tasks = q.tasks[:len(q.tasks)-1]
	q.active++
	return t, true
}

// done ends a task, queueing the directories it found.
func (q *walkQueue) done(subs []walkTask, err error) {
	q.mu.Lock()
	// In reverse, so that the first directory is the first taken.
	for i := len(subs) - 1; i >= 0; i-- {
		q.tasks = append(q.tasks, subs[i])
	}
	q.active--
	if err != nil && q.err == nil {
		q.err = err
	}
	q.mu.Unlock()
	q.cond.Broadcast()
}

// drop releases the tasks left when the walk stopped early.
func (q *walkQueue) drop() {
	for _, t := range q.tasks {
		t.parent.release()
	}
	q.tasks = nil
}
