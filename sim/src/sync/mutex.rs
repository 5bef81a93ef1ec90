//! A mutex. `lock` is a scheduling point; a task waiting for a held mutex is blocked. Dropping
//! the guard releases it without a scheduling point: the holder's next operation is one, and
//! nothing the holder does in between is visible to other tasks.

use std::borrow::Cow;
use std::cell::{RefCell, RefMut};
use std::hash::Hash;
use std::ops::{Deref, DerefMut};

use crate::rt::op::{ObjState, Op};
use crate::rt::task::point;
use crate::rt::{report_value, try_with_exec, with_exec, ObjId};

pub struct Mutex<T> {
    id: ObjId,
    data: RefCell<T>,
}

impl<T: Hash> Mutex<T> {
    pub fn new(name: impl Into<Cow<'static, str>>, value: T) -> Self {
        let id = with_exec(|ex| ex.add_object(name.into(), ObjState::Mutex { owner: None }));
        report_value(id, &value);
        Mutex {
            id,
            data: RefCell::new(value),
        }
    }

    pub async fn lock(&self) -> MutexGuard<'_, T> {
        point(Op::Lock(self.id)).await;
        with_exec(|ex| {
            let owner = ex.current.map(|t| t.0);
            *ex.state_mut(self.id) = ObjState::Mutex { owner };
            ex.observe_value(self.id);
        });
        MutexGuard {
            id: self.id,
            data: self.data.borrow_mut(),
            report: report_value::<T>,
        }
    }
}

pub struct MutexGuard<'a, T> {
    id: ObjId,
    data: RefMut<'a, T>,
    /// Reports the contents as the guard leaves them (value-state search).
    report: fn(ObjId, &T),
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.data
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.data
    }
}

impl<T> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        let id = self.id;
        (self.report)(id, &self.data);
        try_with_exec(|ex| *ex.state_mut(id) = ObjState::Mutex { owner: None });
    }
}
