//! Polling a set of futures side by side in one task, each only when its own
//! waker fired (so a fan-out to `n` providers costs `O(n)` polls, not `O(n²)`).

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

/// What the slots' wakers share: which slots were woken, and the task to wake.
struct Shared {
    woken: Vec<AtomicBool>,
    parent: Mutex<Option<Waker>>,
}

struct SlotWaker {
    shared: Arc<Shared>,
    index: usize,
}

impl Wake for SlotWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.shared.woken[self.index].store(true, Ordering::Release);
        let parent = self.shared.parent.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(waker) = parent.as_ref() {
            waker.wake_by_ref();
        }
    }
}

/// Run every future to completion; the outputs in order, `None` for one
/// that panicked (the panic is contained to its own slot).
pub(crate) async fn all<F: Future>(futures: impl IntoIterator<Item = F>) -> Vec<Option<F::Output>> {
    let mut futures: Vec<Option<Pin<Box<F>>>> =
        futures.into_iter().map(|f| Some(Box::pin(f))).collect();
    let n = futures.len();
    let shared = Arc::new(Shared {
        // Every slot starts woken: each is polled once to get going.
        woken: (0..n).map(|_| AtomicBool::new(true)).collect(),
        parent: Mutex::new(None),
    });
    let wakers: Vec<Waker> = (0..n)
        .map(|index| {
            Waker::from(Arc::new(SlotWaker {
                shared: Arc::clone(&shared),
                index,
            }))
        })
        .collect();
    let mut outputs: Vec<Option<F::Output>> = (0..n).map(|_| None).collect();
    let mut left = n;
    std::future::poll_fn(|cx| {
        {
            // Stored before the slots are looked at, so that a slot woken
            // while they are being polled wakes this task again.
            let mut parent = shared.parent.lock().unwrap_or_else(|p| p.into_inner());
            if !parent.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *parent = Some(cx.waker().clone());
            }
        }
        for (index, slot) in futures.iter_mut().enumerate() {
            let Some(future) = slot else { continue };
            if !shared.woken[index].swap(false, Ordering::AcqRel) {
                continue;
            }
            let mut slot_cx = Context::from_waker(&wakers[index]);
            match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut slot_cx))) {
                Ok(Poll::Pending) => continue,
                Ok(Poll::Ready(output)) => outputs[index] = Some(output),
                Err(_) => {} // panicked: the slot stays `None`
            }
            *slot = None;
            left -= 1;
        }
        if left == 0 {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    outputs
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn outputs_keep_their_order_and_a_panic_stays_in_its_slot() {
        let futures = (0..5u64).map(|i| async move {
            // Finish in reverse order.
            tokio::time::sleep(Duration::from_millis(5 * (5 - i))).await;
            assert!(i != 3, "slot 3 panics");
            i * 10
        });
        let out = all(futures).await;
        assert_eq!(out, vec![Some(0), Some(10), Some(20), None, Some(40)]);
    }

    #[tokio::test]
    async fn futures_run_side_by_side() {
        // Each waits for the next one's signal: only concurrent polling finishes.
        let (txs, rxs): (Vec<_>, Vec<_>) = (0..4)
            .map(|_| tokio::sync::oneshot::channel::<()>())
            .unzip();
        let mut txs: Vec<_> = txs.into_iter().map(Some).collect();
        let futures = rxs.into_iter().enumerate().map(|(i, rx)| {
            let next = if i + 1 < 4 { txs[i + 1].take() } else { None };
            let first = (i == 3).then(|| txs[0].take()).flatten();
            async move {
                if let Some(tx) = first {
                    let _ = tx.send(());
                }
                rx.await.expect("signalled");
                if let Some(tx) = next {
                    let _ = tx.send(());
                }
                i
            }
        });
        let out = tokio::time::timeout(Duration::from_secs(10), all(futures))
            .await
            .expect("no deadlock");
        assert_eq!(out, vec![Some(0), Some(1), Some(2), Some(3)]);
    }

    #[tokio::test]
    async fn nothing_to_join_is_done_at_once() {
        let out = all(Vec::<std::future::Ready<()>>::new()).await;
        assert!(out.is_empty());
    }
}
