//! Counting distinct schedules in bounded memory: the trace digests themselves up to a cap
//! (`Distinct::CAP`), an exact count that parallel jobs and shards merge exactly; past the cap, a
//! HyperLogLog sketch (the `hyperloglog` crate, about 0.8% standard error in 16 KiB), which
//! merges across jobs and shards too. A long exploration then holds at most the cap's digests,
//! however many runs it makes.
//!
//! The digests are a sorted vector that takes them in batches (`Distinct::extend`), 8 bytes a
//! digest. A `BTreeSet` took about 20 bytes a digest, and its insert, once per run, was 4% of a
//! short run's time (`peers --bin front_door`, the atomics program).

use hyperloglog::HyperLogLog;
use serde::{Deserialize, Serialize};

/// The sketch's precision: 2^14 registers, a standard error of 1.04 / 2^7, about 0.8%.
pub const PRECISION: u8 = 14;
const REGISTERS: usize = 1 << PRECISION;
/// The largest value a register can hold: 1 + the bits of a hash past the register index.
const MAX_RANK: u8 = 64 - PRECISION + 1;
/// The sketch's fixed hash keys: every sketch braid makes merges with every other.
const SKETCH_SEED: u128 = 0x6272_6169_645f_7363_6865_6475_6c65_7321;

/// The distinct values of a stream of 64-bit digests: exact up to `cap` of them, estimated past.
#[derive(Clone, Debug)]
pub struct Distinct {
    cap: usize,
    /// Every digest, sorted and each once, while there are at most `cap`.
    exact: Vec<u64>,
    /// Past the cap: the sketch of every digest (`exact` is then empty).
    sketch: Option<Sketch>,
}

impl Default for Distinct {
    fn default() -> Self {
        Distinct::with_cap(Distinct::CAP)
    }
}

impl PartialEq for Distinct {
    fn eq(&self, other: &Self) -> bool {
        self.exact == other.exact && self.sketch == other.sketch
    }
}

impl Distinct {
    /// Digests kept exactly (8 MB of them at most) before the count becomes an estimate.
    pub const CAP: usize = 1 << 20;

    /// An empty count, exact up to `CAP` digests.
    pub fn new() -> Self {
        Distinct::default()
    }

    /// Exact up to `cap` distinct digests (tests use a small cap).
    pub fn with_cap(cap: usize) -> Self {
        Distinct {
            cap,
            exact: Vec::new(),
            sketch: None,
        }
    }

    /// Counts one digest (a repeat counts once). A stream of them is cheaper through a
    /// `Batch`, which hands them over many at a time.
    pub fn insert(&mut self, digest: u64) {
        self.extend(&mut vec![digest]);
    }

    /// Counts every digest in `batch` (repeats count once), leaving it empty: it is sorted,
    /// and merged into the sorted digests in place, from the back.
    pub fn extend(&mut self, batch: &mut Vec<u64>) {
        if let Some(sketch) = &mut self.sketch {
            batch.drain(..).for_each(|d| sketch.insert(d));
            return;
        }
        batch.sort_unstable();
        batch.dedup();
        batch.retain(|d| self.exact.binary_search(d).is_err());
        let (mut old, mut new) = (self.exact.len(), batch.len());
        self.exact.reserve_exact(new);
        self.exact.resize(old + new, 0);
        while new > 0 {
            let to = old + new - 1;
            if old > 0 && self.exact[old - 1] > batch[new - 1] {
                self.exact[to] = self.exact[old - 1];
                old -= 1;
            } else {
                self.exact[to] = batch[new - 1];
                new -= 1;
            }
        }
        batch.clear();
        if self.exact.len() > self.cap {
            self.move_into_sketch();
        }
    }

    /// Moves the digests into a sketch and frees them.
    fn move_into_sketch(&mut self) {
        let mut sketch = self.sketch.take().unwrap_or_default();
        for d in std::mem::take(&mut self.exact) {
            sketch.insert(d);
        }
        self.sketch = Some(sketch);
    }

    /// The union of both streams (an estimate if either is, or the union passes the cap).
    pub fn merge(&mut self, other: Distinct) {
        match (&mut self.sketch, other.sketch) {
            (Some(mine), Some(theirs)) => mine.merge(&theirs),
            (Some(mine), None) => other.exact.into_iter().for_each(|d| mine.insert(d)),
            (None, Some(theirs)) => {
                self.sketch = Some(theirs);
                self.move_into_sketch();
            }
            (None, None) => self.extend(&mut { other.exact }),
        }
    }

    /// How many distinct digests (estimated past the cap: `is_estimate`).
    pub fn count(&self) -> u64 {
        match &self.sketch {
            Some(sketch) => sketch.estimate(),
            None => self.exact.len() as u64,
        }
    }

    /// Whether the count is an estimate (more than the cap of digests, now in a sketch).
    pub fn is_estimate(&self) -> bool {
        self.sketch.is_some()
    }

    /// The digests, sorted, while the count is exact.
    pub fn digests(&self) -> Option<&[u64]> {
        self.sketch.is_none().then_some(&self.exact[..])
    }

    /// The sketch, once the count is an estimate.
    pub fn sketch(&self) -> Option<&Sketch> {
        self.sketch.as_ref()
    }

    /// From a shard's digests (exact) or its sketch.
    pub fn from_digests(digests: impl IntoIterator<Item = u64>) -> Distinct {
        let mut d = Distinct::new();
        d.extend(&mut digests.into_iter().collect());
        d
    }

    /// A count that continues from a shard's sketch (its digests were past the cap).
    pub fn from_sketch(sketch: Sketch) -> Distinct {
        Distinct {
            cap: Distinct::CAP,
            exact: Vec::new(),
            sketch: Some(sketch),
        }
    }
}

/// Digests on their way into a `Distinct`, handed over once there are a quarter as many as it
/// holds (at least 4,096): merging then moves each digest held about four times over, and the
/// batch adds at most a quarter to the memory.
#[derive(Debug, Default)]
pub struct Batch(Vec<u64>);

impl Batch {
    const MIN: usize = 4096;

    /// Adds `digest`, handing the batch to `into` when it is full.
    pub fn push(&mut self, digest: u64, into: &mut Distinct) {
        self.0.push(digest);
        if self.0.len() >= Batch::MIN.max(into.exact.len() / 4) {
            into.extend(&mut self.0);
        }
    }

    /// Hands what is left to `into`.
    pub fn flush(&mut self, into: &mut Distinct) {
        into.extend(&mut self.0);
    }
}

/// A HyperLogLog sketch of digests, mergeable with any other braid makes. In JSON it is
/// `{"precision": 14, "registers": "<hex, one byte a register>"}`, independent of the crate's
/// own layout, and checked when read.
#[derive(Clone, Debug)]
pub struct Sketch(HyperLogLog);

impl Default for Sketch {
    fn default() -> Self {
        // The crate derives its precision from an error rate, as ceil(ln((1.04 / e)^2)):
        // 0.0015 gives ceil(13.08) = 14.
        let hll = HyperLogLog::new_deterministic(0.0015, SKETCH_SEED);
        Sketch(hll)
    }
}

impl PartialEq for Sketch {
    fn eq(&self, other: &Self) -> bool {
        self.registers() == other.registers()
    }
}

/// A digest spread over 64 bits (splitmix64's finaliser), so that the register index and rank
/// are uniform whatever the digest's own distribution, the same on every platform.
fn mix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SketchJson {
    precision: u8,
    registers: String,
}

impl Sketch {
    /// Adds one digest.
    pub fn insert(&mut self, digest: u64) {
        self.0.insert_by_hash_value(mix(digest));
    }

    /// Adds every digest `other` saw: the sketch of both sets.
    pub fn merge(&mut self, other: &Sketch) {
        self.0.merge(&other.0);
    }

    /// The estimated count of distinct digests (about 0.8% standard error).
    pub fn estimate(&self) -> u64 {
        self.0.len().round() as u64
    }

    /// The registers, one byte each, through the crate's serde form (field `M`).
    fn registers(&self) -> Vec<u8> {
        let value = serde_json::to_value(&self.0).expect("a sketch serialises");
        serde_json::from_value(value["M"].clone()).expect("a sketch has registers")
    }

    fn from_registers(registers: Vec<u8>) -> Result<Sketch, String> {
        if registers.len() != REGISTERS {
            return Err(format!(
                "a schedule sketch has {} registers, not {REGISTERS}",
                registers.len()
            ));
        }
        if let Some(r) = registers.iter().find(|&&r| r > MAX_RANK) {
            return Err(format!(
                "a schedule sketch's register holds {r}, more than {MAX_RANK}"
            ));
        }
        let mut value = serde_json::to_value(&Sketch::default().0).expect("a sketch serialises");
        value["M"] = serde_json::to_value(registers).expect("bytes serialise");
        serde_json::from_value(value)
            .map(Sketch)
            .map_err(|e| format!("a schedule sketch: {e}"))
    }
}

impl Serialize for Sketch {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let registers = self
            .registers()
            .iter()
            .map(|r| format!("{r:02x}"))
            .collect();
        SketchJson {
            precision: PRECISION,
            registers,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Sketch {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let json = SketchJson::deserialize(d)?;
        if json.precision != PRECISION {
            return Err(D::Error::custom(format!(
                "a schedule sketch of precision {}, this braid merges precision {PRECISION}",
                json.precision
            )));
        }
        let hex = json.registers.as_bytes();
        if hex.len() % 2 != 0 || !hex.iter().all(u8::is_ascii_hexdigit) {
            return Err(D::Error::custom(
                "a schedule sketch's registers are not hex bytes",
            ));
        }
        let registers = hex
            .chunks(2)
            .map(|pair| {
                std::str::from_utf8(pair)
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| {
                        D::Error::custom("a schedule sketch's registers are not hex bytes")
                    })
            })
            .collect::<Result<Vec<u8>, _>>()?;
        Sketch::from_registers(registers).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synthetic stream of `n` distinct digests, each seen twice.
    fn stream(start: u64, n: u64) -> impl Iterator<Item = u64> {
        (start..start + n).flat_map(|i| [i, i]).map(mix)
    }

    fn within(estimate: u64, truth: u64, tolerance: f64) -> bool {
        (estimate as f64 - truth as f64).abs() <= truth as f64 * tolerance
    }

    #[test]
    fn exact_up_to_the_cap_then_the_set_stops_growing() {
        let mut d = Distinct::with_cap(1000);
        stream(0, 1000).for_each(|x| d.insert(x));
        assert_eq!(d.count(), 1000);
        assert!(!d.is_estimate());
        assert_eq!(d.digests().map(<[u64]>::len), Some(1000));
        d.insert(mix(5_000_000));
        assert!(d.is_estimate(), "one past the cap is an estimate");
        assert_eq!(d.digests(), None);
        assert!(d.exact.is_empty(), "the digests are freed");
        stream(10_000, 200_000).for_each(|x| d.insert(x));
        assert!(d.exact.is_empty(), "the set stays empty past the cap");
        assert!(within(d.count(), 201_001, 0.03), "{}", d.count());
    }

    /// Batches of every size, with repeats within and across them, hold what a set of all
    /// the digests holds, in order; a batch that crosses the cap ends in the same sketch as
    /// one digest at a time.
    #[test]
    fn batches_hold_the_set_of_all_their_digests() {
        use std::collections::BTreeSet;
        let mut x = 1u64;
        let mut next = move || {
            x = mix(x);
            x % 3_000
        };
        let (mut d, mut all, mut batch) = (Distinct::new(), BTreeSet::new(), Batch::default());
        for size in [0, 1, 2, 7, 100, 5_000, 3, 9_000] {
            let mut b: Vec<u64> = (0..size).map(|_| next()).collect();
            all.extend(b.iter().copied());
            d.extend(&mut b);
            assert!(b.is_empty());
            assert_eq!(
                d.digests(),
                Some(&all.iter().copied().collect::<Vec<_>>()[..])
            );
        }
        let (mut pushed, mut set) = (Distinct::new(), BTreeSet::new());
        for _ in 0..20_000 {
            let x = next();
            set.insert(x);
            batch.push(x, &mut pushed);
        }
        batch.flush(&mut pushed);
        assert_eq!(pushed.count(), set.len() as u64);
        let mut empty = Distinct::new();
        batch.flush(&mut empty);
        assert_eq!(empty.count(), 0, "a flush empties the batch");
        let stream: Vec<u64> = (0..5_000u64).map(mix).collect();
        let (mut at_once, mut singly) = (Distinct::with_cap(1_000), Distinct::with_cap(1_000));
        at_once.extend(&mut stream[..600].to_vec());
        at_once.extend(&mut stream[600..].to_vec());
        stream.iter().for_each(|&x| singly.insert(x));
        assert!(at_once.is_estimate() && at_once.exact.is_empty());
        assert_eq!(at_once, singly);
    }

    #[test]
    fn the_estimate_is_within_a_few_percent() {
        for n in [5_000, 100_000, 2_000_000] {
            let mut d = Distinct::with_cap(1000);
            stream(7, n).for_each(|x| d.insert(x));
            assert!(within(d.count(), n, 0.03), "{n}: {}", d.count());
        }
    }

    #[test]
    fn sketches_merge_to_the_union() {
        // Two shards overlapping by a third.
        let (mut a, mut b) = (Distinct::with_cap(1000), Distinct::with_cap(1000));
        stream(0, 300_000).for_each(|x| a.insert(x));
        stream(200_000, 300_000).for_each(|x| b.insert(x));
        a.merge(b);
        assert!(a.is_estimate());
        assert!(within(a.count(), 500_000, 0.03), "{}", a.count());
        // An exact part merges into an estimated one, and exact parts past the cap become one.
        let (mut c, mut e) = (Distinct::with_cap(100), Distinct::with_cap(100));
        stream(0, 80).for_each(|x| c.insert(x));
        stream(50, 80).for_each(|x| e.insert(x));
        c.merge(e);
        assert!(c.is_estimate());
        assert!(within(c.count(), 130, 0.03), "{}", c.count());
        let (mut f, mut g) = (Distinct::new(), Distinct::new());
        stream(0, 80).for_each(|x| f.insert(x));
        stream(50, 80).for_each(|x| g.insert(x));
        f.merge(g);
        assert_eq!((f.count(), f.is_estimate()), (130, false));
    }

    #[test]
    fn a_sketch_round_trips_through_json_and_bad_ones_are_refused() {
        let mut s = Sketch::default();
        stream(0, 50_000).for_each(|x| s.insert(x));
        let json = serde_json::to_string(&s).unwrap();
        let back: Sketch = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.estimate(), s.estimate());
        let short = r#"{"precision": 14, "registers": "0001"}"#;
        let err = serde_json::from_str::<Sketch>(short)
            .unwrap_err()
            .to_string();
        assert!(err.contains("registers"), "{err}");
        let other = r#"{"precision": 12, "registers": ""}"#;
        let err = serde_json::from_str::<Sketch>(other)
            .unwrap_err()
            .to_string();
        assert!(err.contains("precision 12"), "{err}");
        let big = format!(
            r#"{{"precision": 14, "registers": "{}"}}"#,
            "ff".repeat(REGISTERS)
        );
        assert!(serde_json::from_str::<Sketch>(&big).is_err());
    }
}
