//! Working-set estimates per circuit shape: conservative until measured, then calibrated from
//! the first synthesized partition's actual allocation sizes and cached.
use cuzk_groth16::{Density, Synthesized};
use parking_lot::Mutex;
use std::collections::HashMap;

const SCALAR: u64 = 32;
/// Fixed allowance for prover scratch (bucket arrays, small temporaries).
const PROVER_SCRATCH: u64 = 1 << 20;

/// How the provers hold a partition on the host, for an estimate made before any
/// measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostLayout {
    /// The CPU prover's: a/b/c padded to the domain on the host, the assignments converted
    /// once more.
    Cpu,
    /// Provers that plan their MSMs on the host (`ProverBackend::start_host_bytes`, the CUDA
    /// prover's), a/b/c evaluated on the host: `start` holds the plans and a compact copy of
    /// the aux beside the partition.
    DevicePlans {
        /// The aux variables the circuit's constraints hold to 0 or 1 (0 when unknown).
        bounded: usize,
    },
    /// a/b/c deferred to the devices, made from the circuit's matrices there
    /// ([`WorkingSetEstimate::from_deferred_shape`]).
    Deferred {
        /// The aux variables the circuit's constraints hold to 0 or 1 (0 when unknown).
        bounded: usize,
    },
}

/// A bound on what a device prover's `start` holds on the host for the three queries'
/// plans (`cuzk_cuda::msm_plan::host_bytes`): a bitmap of the ones of each query and one
/// more while one is assembled, an index and a full scalar for every value that may be
/// other than 0 or 1 (`full` of them) in all three, and the inputs' prefixes.
fn plans_bound(inputs: usize, vars: u64, full: u64) -> u64 {
    let entry = 4 + SCALAR;
    4 * vars.div_ceil(64) * 8 + 3 * entry * full + 2 * inputs as u64 * (4 + entry)
}

/// The largest compact witness (`cuzk_groth16::CompactAux`) of `aux` values, `full` of which
/// may be other than 0 or 1: two bits a value and a full scalar for each of those.
fn compact_bound(aux: usize, full: u64) -> u64 {
    SCALAR * full + 2 * 8 * (aux as u64).div_ceil(64)
}

/// Bytes one partition of a circuit shape holds at each phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkingSetEstimate {
    /// Peak during synthesis (vectors growing by reallocation included).
    pub synthesis_peak: u64,
    /// Held while waiting for and inside the prover's `start` (a/b/c padded to the domain,
    /// assignments, scratch).
    pub proving: u64,
    /// Held after `start` until `finish` (assignments kept for a deferred G2 MSM).
    pub after_start: u64,
    /// Held after `finish` (the encoded proof).
    pub after_finish: u64,
    /// True once measured from a real synthesized partition.
    pub calibrated: bool,
    /// What the measured partition held once synthesized (its vectors' capacities); 0 until
    /// calibrated.
    pub measured: u64,
}

impl WorkingSetEstimate {
    /// The reservation a partition takes before synthesis: the most it will hold at once.
    pub fn admission_bytes(&self) -> u64 {
        self.synthesis_peak.max(self.proving)
    }

    /// From a circuit's counted shape (constraints, inputs incl. ONE, aux variables), before
    /// any measurement, when synthesis preallocates exactly to it: nothing grows by
    /// reallocation, so the synthesis peak is what the partition holds: the assignments, a/b/c
    /// (at most the domain each: the full recorder reserves the domain, the compiled path the
    /// rows), the densities and one value-class byte per aux variable (the compiled path's).
    /// The proving phase is [`WorkingSetEstimate::from_shape`]'s.
    pub fn from_counted_shape(constraints: usize, inputs: usize, aux: usize) -> WorkingSetEstimate {
        let (i, a) = (inputs as u64, aux as u64);
        let domain = ((constraints + inputs) as u64).max(1).next_power_of_two();
        let density = a.div_ceil(64) * 8 * 2 + i.div_ceil(64) * 8;
        let held = SCALAR * (3 * domain + i + a) + density + a;
        let loose = WorkingSetEstimate::from_shape(constraints, inputs, aux);
        WorkingSetEstimate {
            synthesis_peak: held,
            proving: loose.proving.max(held),
            ..loose
        }
    }

    /// [`WorkingSetEstimate::from_counted_shape`] for provers that plan their MSMs on the
    /// host ([`HostLayout::DevicePlans`]): the proving phase holds the partition as counted
    /// and what their `start` adds, bounded as for a deferred circuit (the plans of the three
    /// queries, every value not held to 0 or 1 by the constraints in all three) plus the
    /// compact copy of the aux it makes to plan from; or the CPU layout's figure, whichever
    /// is larger. (The CPU layout's figure alone is short of it for circuits whose rows fill
    /// most of the domain and whose values are mostly neither 0 nor 1: winning-32g reserved
    /// 75.5 MB, held 93.1 MB on the H100, session 27.)
    pub fn from_counted_shape_with_plans(
        constraints: usize,
        inputs: usize,
        aux: usize,
        bounded: usize,
    ) -> WorkingSetEstimate {
        let counted = WorkingSetEstimate::from_counted_shape(constraints, inputs, aux);
        let vars = (inputs + aux) as u64;
        let full_aux = (aux - bounded.min(aux)) as u64;
        let full = full_aux + inputs as u64;
        let start = plans_bound(inputs, vars, full) + compact_bound(aux, full_aux);
        WorkingSetEstimate {
            proving: counted
                .proving
                .max(counted.synthesis_peak + start + PROVER_SCRATCH),
            ..counted
        }
    }

    /// From a circuit's counted shape when a/b/c are deferred to the prover's device
    /// (`cuzk_groth16::CompiledCircuit::defer`), before any measurement: the partition holds
    /// the assignments alone (the densities are the compiled circuit's), the aux as the
    /// largest compact witness (`cuzk_groth16::CompactAux`) of that shape: two bits a value
    /// and a full scalar for every one that may be other than 0 or 1 — all but the `bounded`
    /// aux variables that the circuit's constraints hold to 0 or 1
    /// (`cuzk_groth16::CompiledCircuit::bounded_aux`; 0 when unknown). Proving adds what the
    /// device prover's `start` holds on the host (`cuzk_cuda::msm_plan::host_bytes`): for
    /// each of its three queries a bitmap of the ones and an index and a full scalar for
    /// every other value it has a base for, another bitmap while one is assembled, and the
    /// inputs' prefixes; here every variable in every bitmap and every such value in all
    /// three queries. The first measured partition replaces this with its counted figure.
    pub fn from_deferred_shape(inputs: usize, aux: usize, bounded: usize) -> WorkingSetEstimate {
        let vars = (inputs + aux) as u64;
        let full = vars - (bounded.min(aux) as u64);
        let held = SCALAR * full + 2 * 8 * (aux as u64).div_ceil(64);
        let plans = plans_bound(inputs, vars, full);
        WorkingSetEstimate {
            synthesis_peak: held,
            proving: held + plans + PROVER_SCRATCH,
            after_start: cuzk_groth16::proof::PROOF_BYTES as u64,
            after_finish: cuzk_groth16::proof::PROOF_BYTES as u64,
            calibrated: false,
            measured: 0,
        }
    }

    /// From a shape (constraints, inputs incl. ONE, aux variables) before any measurement:
    /// assumes vectors may have doubled during synthesis.
    pub fn from_shape(constraints: usize, inputs: usize, aux: usize) -> WorkingSetEstimate {
        let (c, i, a) = (constraints as u64, inputs as u64, aux as u64);
        let len = c + i;
        let domain = len.max(1).next_power_of_two();
        let density = a.div_ceil(64) * 8 * 2 + i.div_ceil(64) * 8;
        let resident = SCALAR * (3 * len + i + a) + density;
        let proving = 3 * SCALAR * domain + 2 * SCALAR * (i + a) + density + PROVER_SCRATCH;
        WorkingSetEstimate {
            synthesis_peak: 2 * resident,
            proving: proving.max(resident),
            after_start: SCALAR * (i + a) + density,
            after_finish: cuzk_groth16::proof::PROOF_BYTES as u64,
            calibrated: false,
            measured: 0,
        }
    }

    /// From a measured partition: capacities are what the allocator really holds.
    pub fn from_synthesized(s: &Synthesized) -> WorkingSetEstimate {
        let resident = resident_bytes(s);
        let biggest = [
            s.a.capacity(),
            s.b.capacity(),
            s.c.capacity(),
            s.aux.capacity(),
        ]
        .into_iter()
        .max()
        .unwrap_or(0) as u64
            * SCALAR;
        // A compact witness grows wave by wave from its units' own copies (native::units):
        // the units of a wave and the last growth of its values stay within half of it.
        let biggest = biggest.max(s.compact_bytes() as u64);
        let len = s.a.len().max(s.b.len()).max(s.c.len()) as u64;
        let domain = len.max(1).next_power_of_two();
        let assign =
            SCALAR * (s.inputs.capacity() + s.aux.capacity()) as u64 + s.compact_bytes() as u64;
        let dens = density_bytes(&s.a_aux_density)
            + density_bytes(&s.b_input_density)
            + density_bytes(&s.b_aux_density);
        let proving = 3 * SCALAR * domain + 2 * assign + dens + PROVER_SCRATCH;
        WorkingSetEstimate {
            // The last reallocation of the largest vector briefly holds old and new buffers.
            synthesis_peak: resident + biggest / 2,
            proving: proving.max(resident),
            after_start: assign + dens,
            after_finish: cuzk_groth16::proof::PROOF_BYTES as u64,
            calibrated: true,
            measured: resident,
        }
    }

    /// From a measured partition, for provers whose `start` holds `start_host` bytes on the
    /// host beyond the partition's own vectors (`ProverBackend::start_host_bytes`, counted
    /// from this partition); `None`: the CPU prover's layout ([`Self::from_synthesized`]).
    /// The proving phase then holds the partition and `start_host`, plus an eighth of
    /// `start_host` for the next partitions of the circuit, whose witnesses may hold more
    /// values that are neither 0 nor 1. A partition none of whose vectors has spare capacity
    /// did not grow by reallocation (a doubled vector keeps its slack), so its synthesis
    /// peaked at what it holds.
    pub fn from_measured(s: &Synthesized, start_host: Option<u64>) -> WorkingSetEstimate {
        let cpu = WorkingSetEstimate::from_synthesized(s);
        let Some(extra) = start_host else {
            return cpu;
        };
        let resident = cpu.measured;
        // A compact witness grew from copies of its parts.
        let slack = [&s.inputs, &s.aux, &s.a, &s.b, &s.c]
            .iter()
            .any(|v| v.capacity() > v.len())
            || s.compact.is_some();
        WorkingSetEstimate {
            synthesis_peak: if slack { cpu.synthesis_peak } else { resident },
            proving: resident + extra + extra / 8 + PROVER_SCRATCH,
            ..cpu
        }
    }

    /// When nothing is known but the SRS size: a working set is smaller than its SRS
    /// (a 32-byte scalar per constraint and variable against 96-byte points for each).
    pub fn from_srs_size(srs_bytes: u64) -> WorkingSetEstimate {
        let b = srs_bytes.max(1 << 20) + PROVER_SCRATCH;
        WorkingSetEstimate {
            synthesis_peak: b,
            proving: b,
            after_start: b / 4,
            after_finish: cuzk_groth16::proof::PROOF_BYTES as u64,
            calibrated: false,
            measured: 0,
        }
    }
}

fn density_bytes(d: &Density) -> u64 {
    d.words.capacity() as u64 * 8
}

/// Bytes a synthesized partition holds (by capacity).
pub fn resident_bytes(s: &Synthesized) -> u64 {
    SCALAR
        * (s.inputs.capacity()
            + s.aux.capacity()
            + s.a.capacity()
            + s.b.capacity()
            + s.c.capacity()) as u64
        + s.compact_bytes() as u64
        + density_bytes(&s.a_aux_density)
        + density_bytes(&s.b_input_density)
        + density_bytes(&s.b_aux_density)
}

/// Where calibrated estimates outlive the run, by circuit id (`measured.rs` keeps them on
/// disk).
pub(crate) trait KeptEstimates: Send + Sync + std::fmt::Debug {
    /// An earlier run's estimate of `circuit_id`, if one is kept and usable.
    fn load(&self, circuit_id: &str) -> Option<WorkingSetEstimate>;
    /// Keeps `e` as `circuit_id`'s estimate.
    fn save(&self, circuit_id: &str, e: &WorkingSetEstimate);
}

/// The cache of calibrated estimates, keyed by circuit id.
#[derive(Debug, Default)]
pub struct Estimator {
    /// Calibrated entries only; uncalibrated estimates are recomputed from hints each time.
    calibrated: Mutex<HashMap<String, WorkingSetEstimate>>,
    /// Where measurements outlive the run (`measured.rs`), if anywhere.
    store: Option<Box<dyn KeptEstimates>>,
    /// Earlier runs' measurements, read from the store on first use (`None`: none usable).
    earlier: Mutex<HashMap<String, Option<WorkingSetEstimate>>>,
}

impl Estimator {
    /// An estimator that keeps its measurements in `store` and starts from those kept there.
    pub(crate) fn with_store(store: Option<Box<dyn KeptEstimates>>) -> Estimator {
        Estimator {
            store,
            ..Estimator::default()
        }
    }

    /// The calibrated estimate of a circuit id, if one exists: measured in this run, else
    /// by an earlier run of this binary on these provers.
    pub fn calibrated(&self, circuit_id: &str) -> Option<WorkingSetEstimate> {
        let now = self.calibrated.lock().get(circuit_id).copied();
        now.or_else(|| self.earlier(circuit_id))
    }

    /// An earlier run's measurement of `circuit_id`, read once.
    fn earlier(&self, circuit_id: &str) -> Option<WorkingSetEstimate> {
        let store = self.store.as_ref()?;
        *self
            .earlier
            .lock()
            .entry(circuit_id.to_string())
            .or_insert_with(|| store.load(circuit_id))
    }

    /// The best estimate available: calibrated, else from the shape hint (`counted`: exact
    /// and preallocated, laid out as `layout` says: [`WorkingSetEstimate::from_counted_shape`],
    /// [`WorkingSetEstimate::from_counted_shape_with_plans`] or
    /// [`WorkingSetEstimate::from_deferred_shape`]), else from the SRS size, else `fallback`
    /// bytes.
    pub fn estimate(
        &self,
        circuit_id: &str,
        hint: Option<(usize, usize, usize)>,
        counted: bool,
        layout: HostLayout,
        srs_bytes: Option<u64>,
        fallback: u64,
    ) -> WorkingSetEstimate {
        if let Some(e) = self.calibrated(circuit_id) {
            return e;
        }
        match (hint, srs_bytes) {
            (Some((c, i, a)), _) if counted => match layout {
                HostLayout::Deferred { bounded } => {
                    WorkingSetEstimate::from_deferred_shape(i, a, bounded)
                }
                HostLayout::DevicePlans { bounded } => {
                    WorkingSetEstimate::from_counted_shape_with_plans(c, i, a, bounded)
                }
                HostLayout::Cpu => WorkingSetEstimate::from_counted_shape(c, i, a),
            },
            (Some((c, i, a)), _) => WorkingSetEstimate::from_shape(c, i, a),
            (None, Some(s)) => WorkingSetEstimate::from_srs_size(s),
            (None, None) => WorkingSetEstimate::from_srs_size(fallback),
        }
    }

    /// Records a measurement the first time a circuit id is seen
    /// ([`WorkingSetEstimate::from_measured`]); returns the cached estimate.
    /// An earlier run's measurement is replaced by this run's first, which is kept in the
    /// store when it differs.
    pub fn calibrate(
        &self,
        circuit_id: &str,
        s: &Synthesized,
        start_host: Option<u64>,
    ) -> WorkingSetEstimate {
        let e = {
            let mut map = self.calibrated.lock();
            if let Some(e) = map.get(circuit_id) {
                return *e;
            }
            let e = WorkingSetEstimate::from_measured(s, start_host);
            map.insert(circuit_id.to_string(), e);
            e
        };
        if let Some(store) = &self.store {
            if self.earlier(circuit_id) != Some(e) {
                store.save(circuit_id, &e);
            }
        }
        e
    }

    /// All calibrated estimates: this run's, and earlier runs' not yet measured again.
    pub fn all(&self) -> Vec<(String, WorkingSetEstimate)> {
        let mut v: Vec<_> = self
            .calibrated
            .lock()
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        for (k, e) in self.earlier.lock().iter() {
            if let Some(e) = e {
                if !v.iter().any(|(id, _)| id == k) {
                    v.push((k.clone(), *e));
                }
            }
        }
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuzk_groth16::Scalar;

    fn fake(constraints: usize, inputs: usize, aux: usize) -> Synthesized {
        let x = Scalar::from(7u64);
        let len = constraints + inputs;
        Synthesized {
            inputs: vec![x; inputs],
            aux: vec![x; aux],
            a: vec![x; len],
            b: vec![x; len],
            c: vec![x; len],
            num_constraints: constraints,
            ..Default::default()
        }
    }

    /// A counted partition as `Recorder::with_hints` in full mode lays it out: a/b/c
    /// reserved to the domain, every value other than 0 or 1.
    fn counted_partition(constraints: usize, inputs: usize, aux: usize) -> Synthesized {
        let len = constraints + inputs;
        let domain = len.next_power_of_two();
        let filled = |n: usize, cap: usize| {
            let mut v = Vec::with_capacity(cap);
            v.resize(n, Scalar::from(7u64));
            v
        };
        Synthesized {
            inputs: filled(inputs, inputs),
            aux: filled(aux, aux),
            a: filled(len, domain),
            b: filled(len, domain),
            c: filled(len, domain),
            num_constraints: constraints,
            ..Default::default()
        }
    }

    #[test]
    fn shape_estimate_covers_the_measurement() {
        let s = fake(1000, 3, 900);
        let measured = WorkingSetEstimate::from_synthesized(&s);
        let hinted = WorkingSetEstimate::from_shape(1000, 3, 900);
        assert!(hinted.synthesis_peak >= measured.synthesis_peak);
        assert!(hinted.proving >= measured.proving);
        assert!(measured.proving >= resident_bytes(&s));
        assert!(measured.calibrated && !hinted.calibrated);
    }

    #[test]
    fn first_sample_is_cached() {
        let e = Estimator::default();
        assert!(e.calibrated("x").is_none());
        let first = e.calibrate("x", &fake(100, 2, 50), None);
        let second = e.calibrate("x", &fake(5000, 2, 50), Some(1));
        assert_eq!(first, second);
        assert_eq!(
            e.estimate("x", Some((1, 1, 1)), false, HostLayout::Cpu, None, 0),
            first
        );
        assert_eq!(
            e.estimate("x", Some((1, 1, 1)), true, HostLayout::Cpu, None, 0),
            first
        );
    }

    /// Issue 13 item 4: a counted, preallocated shape is reserved without the 2x growth guess,
    /// and still covers what such a partition holds.
    #[test]
    fn a_deferred_shape_holds_the_witness_and_a_bound_on_the_device_plans() {
        let (c, i, a): (usize, usize, usize) = (100_000, 3, 90_000);
        let x = Scalar::from(7u64);
        // What a deferred circuit holds: the assignments alone, the aux compact, at its
        // largest (no value 0 or 1).
        let s = Synthesized {
            inputs: vec![x; i],
            compact: Some(cuzk_groth16::CompactAux::from_full(&vec![x; a])),
            num_constraints: c,
            ..Default::default()
        };
        let deferred = WorkingSetEstimate::from_deferred_shape(i, a, 0);
        assert_eq!(deferred.synthesis_peak, resident_bytes(&s));
        // Every value other than 0 and 1: one index and one scalar per variable for L.
        assert!(deferred.proving >= resident_bytes(&s) + 36 * (i + a) as u64);
        let counted = WorkingSetEstimate::from_counted_shape(c, i, a);
        let e = Estimator::default();
        assert_eq!(
            e.estimate(
                "x",
                Some((c, i, a)),
                true,
                HostLayout::Deferred { bounded: 0 },
                None,
                0
            ),
            deferred
        );
        // Uncounted hints keep the loose estimate (the shape may be a guess).
        assert_eq!(
            e.estimate(
                "x",
                Some((c, i, a)),
                false,
                HostLayout::Deferred { bounded: 0 },
                None,
                0
            ),
            WorkingSetEstimate::from_shape(c, i, a)
        );
        // With 80 000 aux values held to 0 or 1 by the constraints: the largest compact
        // witness has a full scalar for the other 10 000 only, and the bound covers it.
        let bounded = 80_000;
        let mut values = vec![x; a];
        values[..bounded].fill(Scalar::from(1u64));
        let s = Synthesized {
            compact: Some(cuzk_groth16::CompactAux::from_full(&values)),
            ..s
        };
        let tight = WorkingSetEstimate::from_deferred_shape(i, a, bounded);
        assert_eq!(tight.synthesis_peak, resident_bytes(&s));
        assert!(tight.proving >= resident_bytes(&s) + 3 * 36 * (i + a - bounded) as u64);
        assert!(tight.admission_bytes() < deferred.admission_bytes() / 4);
        // Knowing the bits, deferring holds far less than a/b/c on the host; knowing none,
        // the three plans' full scalars make it no smaller.
        assert!(tight.admission_bytes() < counted.admission_bytes() / 2);
        assert_eq!(
            e.estimate(
                "x",
                Some((c, i, a)),
                true,
                HostLayout::Deferred { bounded },
                None,
                0
            ),
            tight
        );
        // More than the aux (the submit check's least need) counts them all.
        assert_eq!(
            WorkingSetEstimate::from_deferred_shape(i, a, usize::MAX),
            WorkingSetEstimate::from_deferred_shape(i, a, a)
        );
    }

    /// A counted shape on provers that plan their MSMs on the host, a/b/c on the host: the
    /// first partition's reservation covers the partition and its `start`'s plans and compact
    /// copy at their largest, where the CPU layout's figure did not (winning-32g on the H100,
    /// session 27: 75,496,008 bytes reserved, 93,096,392 held, "working set above its
    /// estimate"); a circuit mostly of bits keeps the CPU layout's figure.
    #[test]
    fn a_counted_shape_on_host_planning_provers_covers_their_start_bytes() {
        let (c, i, a): (usize, usize, usize) = (100_000, 3, 90_000);
        let s = counted_partition(c, i, a);
        let copy = cuzk_groth16::CompactAux::from_full(&s.aux).heap_bytes() as u64;
        let held = resident_bytes(&s) + 3 * 36 * (i + a) as u64 + copy;
        let plans = WorkingSetEstimate::from_counted_shape_with_plans(c, i, a, 0);
        assert!(plans.proving >= held, "{} < {held}", plans.proving);
        assert!(WorkingSetEstimate::from_counted_shape(c, i, a).proving < held);
        assert_eq!(
            Estimator::default().estimate(
                "x",
                Some((c, i, a)),
                true,
                HostLayout::DevicePlans { bounded: 0 },
                None,
                0
            ),
            plans
        );
        // winning-32g's shape and what its first partition held on the H100.
        let (c, i, a) = (370_590, 133, 375_210);
        let measured = 93_096_392;
        assert!(WorkingSetEstimate::from_counted_shape(c, i, a).proving < measured);
        assert!(WorkingSetEstimate::from_counted_shape_with_plans(c, i, a, 0).proving >= measured);
        // porep-32g with its aux all bits: the CPU layout's 21.2 GB is the larger.
        let (c, i, a) = (130_278_541, 328, 130_169_893);
        assert_eq!(
            WorkingSetEstimate::from_counted_shape_with_plans(c, i, a, a),
            WorkingSetEstimate::from_counted_shape(c, i, a)
        );
    }

    #[test]
    fn counted_shape_covers_a_preallocated_partition_without_the_growth_margin() {
        let (c, i, a): (usize, usize, usize) = (100_000, 3, 90_000);
        let s = counted_partition(c, i, a);
        let counted = WorkingSetEstimate::from_counted_shape(c, i, a);
        let loose = WorkingSetEstimate::from_shape(c, i, a);
        let measured = WorkingSetEstimate::from_synthesized(&s);
        assert!(counted.synthesis_peak >= resident_bytes(&s));
        assert!(counted.proving >= measured.proving);
        assert!(counted.admission_bytes() < loose.admission_bytes());
        // porep-32g: 33.3 GB with the guess, the proving phase's 21.2 GB without it.
        let (c, i, a) = (130_278_541, 328, 130_169_893);
        let loose = WorkingSetEstimate::from_shape(c, i, a).admission_bytes();
        let counted = WorkingSetEstimate::from_counted_shape(c, i, a).admission_bytes();
        assert!(
            loose > 33_000_000_000 && counted < 21_500_000_000,
            "{loose} {counted}"
        );
    }

    /// Issue 13 item 4: with a prover that pads a/b/c on its device (the CUDA backend), a
    /// measured partition reserves itself and its `start`'s planning bytes, not the CPU
    /// prover's padded a/b/c and converted assignments: porep-32g's 19.8 GiB (measured
    /// 15.6 GiB) on the H200.
    #[test]
    fn a_device_padded_prover_reserves_the_partition_and_its_start_bytes() {
        // snap-32g's shape scaled down: rows far from the next power of two.
        let s = fake(81_049, 5, 80_000);
        let cpu = WorkingSetEstimate::from_measured(&s, None);
        assert_eq!(cpu, WorkingSetEstimate::from_synthesized(&s));
        let extra = 12_345;
        let dev = WorkingSetEstimate::from_measured(&s, Some(extra));
        let resident = resident_bytes(&s);
        assert_eq!(dev.proving, resident + extra + extra / 8 + PROVER_SCRATCH);
        // Nothing has spare capacity: nothing grew, synthesis peaked at what it holds.
        assert_eq!(dev.synthesis_peak, resident);
        assert_eq!(dev.admission_bytes(), dev.proving);
        assert!(dev.admission_bytes() < cpu.admission_bytes() * 3 / 4);
        assert_eq!(
            (dev.measured, dev.after_start),
            (cpu.measured, cpu.after_start)
        );
        // A vector with room to spare may have doubled: the growth peak is kept.
        let mut grown = fake(81_049, 5, 80_000);
        grown.aux.reserve_exact(80_000);
        let dev = WorkingSetEstimate::from_measured(&grown, Some(extra));
        assert_eq!(
            dev.synthesis_peak,
            WorkingSetEstimate::from_synthesized(&grown).synthesis_peak
        );
    }
}
