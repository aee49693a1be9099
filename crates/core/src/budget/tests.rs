//! The memory budget's unit tests (`budget.rs`).
use super::*;
use std::time::Duration;

#[tokio::test]
async fn the_urgent_reserve_is_left_to_high_and_critical_acquires() {
    let b = MemoryBudget::with_urgent_reserve(100, 20);
    assert_eq!(b.limit_for(Priority::Normal), 80);
    assert_eq!(b.limit_for(Priority::High), 100);
    let bulk = b
        .acquire(80, Category::WorkingSet, Priority::Normal)
        .await
        .unwrap();
    assert!(b.try_acquire(1, Category::WorkingSet).is_none());
    assert_eq!(
        b.acquire(81, Category::WorkingSet, Priority::Normal)
            .await
            .unwrap_err(),
        BudgetError::TooLarge {
            needed: 81,
            budget: 80
        }
    );
    // A bulk acquire waits at the reserve...
    let b2 = b.clone();
    let waiting =
        tokio::spawn(async move { b2.acquire(10, Category::WorkingSet, Priority::Low).await });
    while b.snapshot().waiting == 0 {
        tokio::task::yield_now().await;
    }
    // ...while a CRITICAL one is served from it at once, ahead of that waiter.
    let urgent = tokio::time::timeout(
        Duration::from_secs(10),
        b.acquire(20, Category::WorkingSet, Priority::Critical),
    )
    .await
    .expect("a CRITICAL acquire that fits the reserve waited")
    .unwrap();
    assert_eq!(b.reserved(), 100);
    // The reserve coming back does not let the bulk waiter into it.
    drop(urgent);
    tokio::task::yield_now().await;
    assert_eq!(b.snapshot().waiting, 1);
    assert_eq!(b.reserved(), 80);
    drop(bulk);
    let r = waiting.await.unwrap().unwrap();
    assert_eq!((r.bytes(), b.reserved()), (10, 10));
    assert!(b.pressure().is_none());
}

#[tokio::test]
async fn too_large_fails_at_once() {
    let b = MemoryBudget::new(100);
    let e = b
        .acquire(101, Category::WorkingSet, Priority::Normal)
        .await
        .unwrap_err();
    assert_eq!(
        e,
        BudgetError::TooLarge {
            needed: 101,
            budget: 100
        }
    );
}

#[tokio::test]
async fn drop_returns_bytes_and_shrink_splits() {
    let b = MemoryBudget::new(100);
    let mut r = b
        .acquire(60, Category::WorkingSet, Priority::Normal)
        .await
        .unwrap();
    assert_eq!(b.reserved(), 60);
    r.shrink_to(40);
    assert_eq!(b.reserved(), 40);
    let s = r.split(15);
    assert_eq!((r.bytes(), s.bytes()), (25, 15));
    assert_eq!(b.reserved(), 40);
    drop(s);
    assert_eq!(b.reserved(), 25);
    drop(r);
    assert_eq!(b.reserved(), 0);
    assert_eq!(b.snapshot().peak, 60);
}

#[tokio::test]
async fn large_waiter_is_not_starved_by_small_ones() {
    let b = MemoryBudget::new(100);
    let first = b
        .acquire(60, Category::WorkingSet, Priority::Normal)
        .await
        .unwrap();
    let b2 = b.clone();
    let big = tokio::spawn(async move {
        b2.acquire(80, Category::WorkingSet, Priority::Normal)
            .await
            .map(|r| r.bytes())
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    // A small request would fit (60 + 10 <= 100) but must queue behind the big one.
    assert!(b.try_acquire(10, Category::WorkingSet).is_none());
    let b3 = b.clone();
    let small = tokio::spawn(async move {
        b3.acquire(10, Category::WorkingSet, Priority::Normal)
            .await
            .map(|r| r.bytes())
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(!small.is_finished());
    drop(first);
    assert_eq!(big.await.unwrap(), Ok(80));
    assert_eq!(small.await.unwrap(), Ok(10));
    assert_eq!(b.reserved(), 0);
}

#[tokio::test]
async fn higher_priority_is_served_first() {
    let b = MemoryBudget::new(100);
    let hold = b
        .acquire(100, Category::WorkingSet, Priority::Normal)
        .await
        .unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for (name, prio) in [("low", Priority::Low), ("crit", Priority::Critical)] {
        let b = b.clone();
        let order = order.clone();
        tasks.push(tokio::spawn(async move {
            let r = b.acquire(100, Category::WorkingSet, prio).await.unwrap();
            order.lock().push(name);
            drop(r);
        }));
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    drop(hold);
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(*order.lock(), vec!["crit", "low"]);
}

#[tokio::test]
async fn dropped_waiter_leaves_no_trace() {
    let b = MemoryBudget::new(100);
    let hold = b
        .acquire(90, Category::WorkingSet, Priority::Normal)
        .await
        .unwrap();
    let fut = b.acquire(50, Category::WorkingSet, Priority::Normal);
    let r = tokio::time::timeout(Duration::from_millis(5), fut).await;
    assert!(r.is_err());
    assert!(!b.has_waiters());
    drop(hold);
    assert_eq!(b.reserved(), 0);
    assert!(b.try_acquire(100, Category::Srs).is_some());
}

/// Waits until `n` acquires are registered.
async fn until_waiting(b: &MemoryBudget, n: usize) {
    while b.snapshot().waiting < n {
        tokio::task::yield_now().await;
    }
}

/// Seen on the H200 (budget 84 GiB, porep-32g and snap-32g preloaded): a SnapDeals proof's
/// backlog of partitions evicted the idle PoRep SRS 2 s after its load, though the snap
/// partitions in flight would soon free what the next one needed; the next PoRep proof then
/// waited 151 s for the reload.
#[tokio::test]
async fn only_what_waiting_cannot_bring_is_unavoidable() {
    let b = MemoryBudget::new(100);
    let in_flight = b.try_acquire(60, Category::WorkingSet).unwrap();
    let _srs = b.try_acquire(30, Category::Srs).unwrap();
    let b2 = b.clone();
    let first =
        tokio::spawn(async move { b2.acquire(50, Category::WorkingSet, Priority::Normal).await });
    until_waiting(&b, 1).await;
    // Free 10 and 60 in flight: waiting serves it.
    assert_eq!(
        b.pressure(),
        Pressure {
            backlog: 40,
            unavoidable: 0
        }
    );
    let b3 = b.clone();
    let second =
        tokio::spawn(async move { b3.acquire(45, Category::WorkingSet, Priority::Normal).await });
    until_waiting(&b, 2).await;
    assert_eq!(
        b.pressure(),
        Pressure {
            backlog: 85,
            unavoidable: 0
        }
    );
    // A holder of working set waiting for more: its bytes do not count as coming back.
    let held = hold_and_wait_for_more(&b, in_flight).await;
    assert_eq!(
        b.pressure(),
        Pressure {
            backlog: 95,
            unavoidable: 40
        }
    );
    drop(held);
    drop((first, second));
}

/// Moves `r` into a task that waits for 10 more beside it, until that task is registered.
async fn hold_and_wait_for_more(b: &MemoryBudget, r: Reservation) -> tokio::task::JoinHandle<()> {
    let b2 = b.clone();
    let n = b.snapshot().waiting;
    let t = tokio::spawn(async move {
        let _more = b2.acquire_more(&r, 10, Priority::Normal).await;
    });
    until_waiting(b, n + 1).await;
    t
}

/// A reclaimer that gives back an idle "SRS" only when waiting cannot help, as the engine's
/// does for a recently used SRS.
fn evicts_when_unavoidable(b: &MemoryBudget, idle: Reservation) -> Arc<Mutex<Vec<Pressure>>> {
    let idle = Arc::new(Mutex::new(Some(idle)));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    b.set_reclaimer(Arc::new(move |p: Pressure| {
        s.lock().push(p);
        if p.unavoidable > 0 {
            drop(idle.lock().take());
        }
    }));
    seen
}

/// A grant that leaves the next waiter lacking what only an eviction frees must wake a waiter
/// to reclaim: nothing else would (no acquire is coming), and the waiter would wait forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_that_leaves_the_head_short_wakes_a_reclaim() {
    let b = MemoryBudget::new(100);
    let in_flight = b.try_acquire(40, Category::WorkingSet).unwrap();
    let idle = b.try_acquire(30, Category::Srs).unwrap();
    let seen = evicts_when_unavoidable(&b, idle);
    // An SRS load: free 30 and 40 in flight cover its 60, so nothing is evicted.
    let b2 = b.clone();
    let load = tokio::spawn(async move { b2.acquire(60, Category::Srs, Priority::Normal).await });
    until_waiting(&b, 1).await;
    let b3 = b.clone();
    let part =
        tokio::spawn(async move { b3.acquire(30, Category::WorkingSet, Priority::Normal).await });
    until_waiting(&b, 2).await;
    assert!(
        seen.lock().iter().all(|p| p.unavoidable == 0),
        "{:?}",
        seen.lock()
    );
    // The working set ends: the load is served (90 reserved), and the partition behind it
    // now lacks 20 that only the idle SRS can give.
    drop(in_flight);
    let loaded = tokio::time::timeout(Duration::from_secs(10), load)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let part = tokio::time::timeout(Duration::from_secs(10), part)
        .await
        .expect("the partition behind the load was left waiting: no reclaim after the grant")
        .unwrap()
        .unwrap();
    assert_eq!((loaded.bytes(), part.bytes(), b.reserved()), (60, 30, 90));
    assert!(
        seen.lock().iter().any(|p| p.unavoidable == 20),
        "{:?}",
        seen.lock()
    );
}
