//! Write transactions of one process taken in the order they asked.
//!
//! LMDB's writer lock is not fair: a thread that commits and at once begins
//! its next write usually takes the lock again before a waiting thread has
//! woken, so a loop of writes (a sweep's cycles) could keep another writer
//! waiting for many of them. Each write here first takes a numbered turn
//! and waits until the turn before it has ended, so a writer waits at most
//! for the writes that asked before it. Across processes LMDB's lock alone
//! decides.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// The turns of one environment's writers.
#[derive(Debug, Default)]
pub(crate) struct Turns {
    queue: Mutex<Queue>,
    next_up: Condvar,
}

#[derive(Debug, Default)]
struct Queue {
    /// The number the next writer to ask takes.
    next: u64,
    /// The number whose turn it is.
    serving: u64,
}

/// A writer's turn, held until its transaction has ended.
#[derive(Debug)]
pub(crate) struct Turn<'t> {
    turns: &'t Turns,
}

impl Turns {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for this writer's turn.
    pub(crate) fn wait(&self) -> Turn<'_> {
        let mut q = self.lock();
        let mine = q.next;
        q.next += 1;
        while q.serving != mine {
            q = self.next_up.wait(q).unwrap_or_else(PoisonError::into_inner);
        }
        Turn { turns: self }
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.turns.lock().serving += 1;
        self.turns.next_up.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Waits (without a clock) until `n` turns have been asked for.
    fn asked(turns: &Turns, n: u64) {
        while turns.lock().next < n {
            std::thread::yield_now();
        }
    }

    /// A writer that ends its turn and at once asks again goes after the
    /// writers already waiting, not before them (what LMDB's lock alone
    /// does not promise).
    #[test]
    fn writers_go_in_the_order_they_asked_and_a_writer_asking_again_goes_last() {
        let turns = Arc::new(Turns::default());
        let order = Arc::new(Mutex::new(Vec::new()));
        let first = turns.wait();
        let waiter = |name: &'static str| {
            let (turns, order) = (turns.clone(), order.clone());
            std::thread::spawn(move || {
                let _turn = turns.wait();
                order
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(name);
            })
        };
        let b = waiter("B");
        asked(&turns, 2);
        let c = waiter("C");
        asked(&turns, 3);
        order
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push("A");
        drop(first);
        let again = turns.wait();
        order
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push("A again");
        drop(again);
        b.join().expect("B");
        c.join().expect("C");
        let order = order.lock().unwrap_or_else(PoisonError::into_inner).clone();
        assert_eq!(order, ["A", "B", "C", "A again"]);
    }
}
