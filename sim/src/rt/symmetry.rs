//! Symmetry: a model's interchangeable tasks (publishers of one shape), searched once per orbit.
//!
//! A model declares the ids of tasks that run the same code and differ only in the id they
//! carry (`Model::symmetric_members`, each spawned with `sim::spawn_member`), and hashes that id,
//! wherever a value the engine digests holds it, as a `Member`. Swapping two members' roles then
//! maps every run onto a run, every state onto a state, and a verdict onto the same verdict (the
//! model promises its invariants treat members alike). A search by state may take a state and
//! its images as one (Ip & Dill, "Better verification through symmetry", FMSD 1996; Emerson &
//! Sistla, FMSD 1996): the engine keeps the state's digests under each renaming of the members,
//! one lane per permutation, and the visited states key a state by the smallest. Any set of
//! permutations that holds the identity is sound (two states share a key only when one is an
//! image of the other); the whole group merges each orbit. Up to `FULL_GROUP` members every
//! permutation is a lane; beyond, the rotations only (n lanes, not n!).
//!
//! What the renaming cannot follow turns it off for the rest of the run (the identity lane
//! alone): an object or a task created while a member runs, its wake-up object included (each
//! is known by a number the renaming does not map; a member is never joinable, `spawn_member`
//! gives it no join object); and, state by state, a fair yield (whom it waits for is a set of
//! task numbers). Measured on the broker's 2x2 access proof (two publishers):
//! see the scenario file.

use std::cell::RefCell;
use std::hash::{Hash, Hasher};

/// Members up to which every permutation is a lane (4! = 24).
const FULL_GROUP: usize = 4;

thread_local! {
    /// The renaming the digest being computed is taken under: (member id, its image). Empty:
    /// the identity.
    static RENAMING: RefCell<Vec<(usize, usize)>> = const { RefCell::new(Vec::new()) };
}

/// The identity of one of a model's interchangeable tasks, as a value carries it: hashed as the
/// id of the member whose role it has under the renaming being digested (see the module docs).
/// A model whose values name members (a message's publisher) hashes those names as `Member`s;
/// outside a digest, it hashes as its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Member(pub usize);

impl Hash for Member {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let image = RENAMING.with(|r| {
            r.borrow()
                .iter()
                .find(|(id, _)| *id == self.0)
                .map_or(self.0, |(_, image)| *image)
        });
        state.write_usize(image);
    }
}

/// The members of one run and the permutations its digests are kept under.
pub(crate) struct Symmetry {
    /// The declared member ids.
    ids: Vec<usize>,
    /// The task of each member, once spawned.
    tasks: Vec<Option<usize>>,
    /// `perms[k][j]`: which member takes member `j`'s role in lane `k` (lane 0: the identity;
    /// none at all without members).
    perms: Vec<Vec<usize>>,
    /// Off once the run did something the renaming cannot follow.
    off: bool,
}

impl Symmetry {
    /// The symmetry of a run whose model declares these member ids (none: the identity alone).
    pub(crate) fn new(ids: Vec<usize>) -> Self {
        let n = ids.len();
        let perms = match n {
            // No member: the identity alone, kept as no table at all (`lanes` counts it).
            0 => Vec::new(),
            1 => vec![vec![0]],
            n if n <= FULL_GROUP => permutations(n),
            n => (0..n)
                .map(|r| (0..n).map(|j| (j + r) % n).collect())
                .collect(),
        };
        Symmetry {
            tasks: vec![None; n],
            ids,
            perms,
            off: false,
        }
    }

    /// How many digests each value is kept under.
    pub(crate) fn lanes(&self) -> usize {
        self.perms.len().max(1)
    }

    /// Whether lanes beyond the identity are still kept.
    pub(crate) fn active(&self) -> bool {
        !self.off && self.perms.len() > 1
    }

    /// Whether every member is spawned and the renaming still holds: the state's images are
    /// then states of this model.
    pub(crate) fn usable(&self) -> bool {
        self.active() && self.tasks.iter().all(Option::is_some)
    }

    /// Task `task` is member `id`: spawned by the model's setup, once per member.
    pub(crate) fn spawned(&mut self, id: usize, task: usize, by_setup: bool) {
        let Some(j) = self.ids.iter().position(|m| *m == id) else {
            panic!(
                "sim::spawn_member: {id} is not one of the model's symmetric members {:?} \
                 (Model::symmetric_members)",
                self.ids
            );
        };
        assert!(
            by_setup && self.tasks[j].is_none(),
            "sim::spawn_member: member {id} must be spawned once, by the model's setup"
        );
        self.tasks[j] = Some(task);
    }

    /// Something the renaming cannot follow happened (see the module docs) if `task` (the task
    /// creating an object or a task) is a member.
    pub(crate) fn created_by(&mut self, task: Option<usize>) {
        if task.is_some_and(|t| self.member_of(t).is_some()) {
            self.off = true;
        }
    }

    fn member_of(&self, task: usize) -> Option<usize> {
        self.tasks.iter().position(|t| *t == Some(task))
    }

    /// The task that has `task`'s role in lane `k` (`task` itself if it is no member).
    pub(crate) fn image(&self, k: usize, task: usize) -> usize {
        match self.member_of(task) {
            Some(j) => self.tasks[self.perms[k][j]].unwrap_or(task),
            None => task,
        }
    }

    /// `digest` computed under each lane's renaming, handed to `put` with its lane; the
    /// identity's alone once the renaming is off.
    pub(crate) fn each_lane(&self, digest: impl Fn() -> u64, mut put: impl FnMut(usize, u64)) {
        put(0, digest());
        if !self.active() {
            return;
        }
        for k in 1..self.perms.len() {
            RENAMING.with(|r| {
                let mut r = r.borrow_mut();
                r.clear();
                r.extend((0..self.ids.len()).map(|j| (self.ids[j], self.ids[self.perms[k][j]])));
            });
            let d = digest();
            put(k, d);
        }
        RENAMING.with(|r| r.borrow_mut().clear());
    }

    /// The lanes a fingerprint is taken over: every lane while usable, else the identity.
    pub(crate) fn fingerprint_lanes(&self) -> usize {
        match self.usable() {
            true => self.lanes(),
            false => 1,
        }
    }
}

/// Every permutation of `0..n`, the identity first.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    let mut out = vec![(0..n).collect::<Vec<_>>()];
    // Heap's algorithm, iterative.
    let mut a: Vec<usize> = (0..n).collect();
    let mut c = vec![0; n];
    let mut i = 0;
    while i < n {
        if c[i] < i {
            match i % 2 {
                0 => a.swap(0, i),
                _ => a.swap(c[i], i),
            }
            out.push(a.clone());
            c[i] += 1;
            i = 0;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_permutation_once_identity_first() {
        for n in 1..=4 {
            let perms = permutations(n);
            let distinct: BTreeSet<_> = perms.iter().cloned().collect();
            let factorial: usize = (1..=n).product();
            assert_eq!((perms.len(), distinct.len()), (factorial, factorial));
            assert_eq!(perms[0], (0..n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_member_hashes_as_its_image_in_a_lane() {
        let mut sym = Symmetry::new(vec![1, 2]);
        sym.spawned(1, 3, true);
        sym.spawned(2, 4, true);
        let mut seen = Vec::new();
        sym.each_lane(
            || crate::digest::of(&(Member(1), 7usize)),
            |k, d| seen.push((k, d)),
        );
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[1].1, crate::digest::of(&(Member(2), 7usize)));
        assert_eq!(
            (sym.image(1, 3), sym.image(1, 4), sym.image(1, 0)),
            (4, 3, 0)
        );
        // Outside a digest a member hashes as itself.
        assert_ne!(crate::digest::of(&Member(1)), crate::digest::of(&Member(2)));
        sym.created_by(Some(3));
        assert!(!sym.usable());
    }
}
