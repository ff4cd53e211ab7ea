//! Locks taken even after a panic: the crate's one policy for a poisoned `std::sync` lock.
//!
//! Each of the crate's critical sections leaves its data consistent at every point where the
//! code inside could panic (a map entry inserted or removed, a field replaced), so a panic
//! while a lock was held tells nothing about the data. Taking the lock as it is keeps one
//! panicking tool or callback from failing every later request that shares the lock.

use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// [`Mutex::lock`], poisoned or not.
pub(crate) trait MutexExt<T: ?Sized> {
    /// The guard, whether or not a holder panicked.
    fn lock_unpoisoned(&self) -> MutexGuard<'_, T>;
}

impl<T: ?Sized> MutexExt<T> for Mutex<T> {
    #[inline]
    fn lock_unpoisoned(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// [`RwLock::read`] and [`RwLock::write`], poisoned or not.
pub(crate) trait RwLockExt<T: ?Sized> {
    /// The read guard, whether or not a writer panicked.
    fn read_unpoisoned(&self) -> RwLockReadGuard<'_, T>;
    /// The write guard, whether or not a writer panicked.
    fn write_unpoisoned(&self) -> RwLockWriteGuard<'_, T>;
}

impl<T: ?Sized> RwLockExt<T> for RwLock<T> {
    #[inline]
    fn read_unpoisoned(&self) -> RwLockReadGuard<'_, T> {
        self.read().unwrap_or_else(PoisonError::into_inner)
    }

    #[inline]
    fn write_unpoisoned(&self) -> RwLockWriteGuard<'_, T> {
        self.write().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_is_still_taken() {
        let mutex = Mutex::new(1);
        let rwlock = RwLock::new(1);
        let _ = std::panic::catch_unwind(|| {
            let _held = mutex.lock().unwrap();
            let _written = rwlock.write().unwrap();
            panic!("poisons both");
        });
        assert!(mutex.is_poisoned() && rwlock.is_poisoned());
        *mutex.lock_unpoisoned() += 1;
        *rwlock.write_unpoisoned() += 1;
        assert_eq!(
            (*mutex.lock_unpoisoned(), *rwlock.read_unpoisoned()),
            (2, 2)
        );
    }
}
