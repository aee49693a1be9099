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
    assert_eq!(b.shortfall(), 0);
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
