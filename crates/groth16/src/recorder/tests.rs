//! The recorder's tests.
use super::*;

#[test]
fn density_bits() {
    let mut d = Density::new(130);
    d.set(0);
    d.set(64);
    d.set(129);
    d.set(500);
    assert_eq!(d.count_ones(), 3);
    assert!(d.get(129) && !d.get(128) && !d.get(500));
    assert_eq!(d.iter_ones().collect::<Vec<_>>(), vec![0, 64, 129]);
    let f = Density::full(130);
    assert_eq!(f.count_ones(), 130);
    let p = Density::from_bools([true, false, true]);
    assert_eq!((p.len(), p.count_ones()), (3, 2));
}

struct Tiny;
impl Circuit<Scalar> for Tiny {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = cs.alloc_input(|| "x", || Ok(Scalar::from(3u64)))?;
        let y = cs.alloc(|| "y", || Ok(Scalar::from(5u64)))?;
        let z = cs.alloc(|| "z", || Ok(Scalar::from(15u64)))?;
        let unused = cs.alloc(|| "u", || Ok(Scalar::from(7u64)))?;
        cs.enforce(|| "xy=z", |lc| lc + x, |lc| lc + y, |lc| lc + z);
        // A zero coefficient does not count towards density.
        cs.enforce(
            || "zero coeff",
            |lc| lc + (Scalar::ZERO, unused),
            |lc| lc,
            |lc| lc,
        );
        Ok(())
    }
}

#[test]
fn records_tiny_circuit() {
    let s = Recorder::synthesize(Tiny, RecorderMode::Full).expect("synthesis");
    assert_eq!(s.inputs.len(), 2);
    assert_eq!(s.aux.len(), 3);
    assert_eq!(s.num_constraints, 2);
    assert_eq!(s.a.len(), 4);
    assert_eq!(s.a[0], Scalar::from(3u64));
    assert_eq!(s.b[0], Scalar::from(5u64));
    assert_eq!(s.c[0], Scalar::from(15u64));
    assert_eq!(s.a[2], Scalar::ONE);
    assert_eq!(s.a[3], Scalar::from(3u64));
    assert!(s.is_satisfied());
    assert_eq!(
        s.a_aux_density.iter_ones().collect::<Vec<_>>(),
        Vec::<usize>::new()
    );
    assert_eq!(s.b_aux_density.iter_ones().collect::<Vec<_>>(), vec![0]);
    assert_eq!(s.b_input_density.count_ones(), 0);
    assert!(s.heap_bytes() >= s.abc_bytes());

    let w = Recorder::synthesize(Tiny, RecorderMode::WitnessOnly).expect("synthesis");
    assert!(
        w.aux.is_empty(),
        "a witness-only recording holds its assignment compact"
    );
    assert_eq!(w.compact, Some(CompactAux::from_full(&s.aux)));
    assert_eq!(w.num_aux(), s.aux.len());
    assert!(w.a.is_empty() && !w.has_evaluations());
    assert_eq!(w.with_full_aux().aux, s.aux);
}

/// Synthesizes `parts` copies of a small gadget, in sub-systems when extensible.
struct Parts {
    parts: u64,
    split: bool,
}
fn part<CS: ConstraintSystem<Scalar>>(cs: &mut CS, k: u64) -> Result<(), SynthesisError> {
    let x = cs.alloc_input(|| "x", || Ok(Scalar::from(k + 2)))?;
    let mut prev = cs.alloc(|| "a", || Ok(Scalar::from(k + 3)))?;
    let mut val = Scalar::from(k + 3);
    // Some parts use ONE in B, so input 0's B density must merge.
    let b_one = k % 2 == 0;
    for i in 0..(5 + k as usize % 70) {
        let next_val = val * Scalar::from(k + 2) + Scalar::from(i as u64);
        let next = cs.alloc(|| "n", || Ok(next_val))?;
        if b_one {
            cs.enforce(
                || "step",
                |lc| lc + prev,
                |lc| lc + x + (Scalar::ZERO, CS::one()),
                |lc| lc + next - (Scalar::from(i as u64), CS::one()),
            );
        } else {
            cs.enforce(
                || "step",
                |lc| lc + x,
                |lc| lc + prev,
                |lc| lc + next - (Scalar::from(i as u64), CS::one()),
            );
        }
        prev = next;
        val = next_val;
    }
    if k == 1 {
        cs.enforce(|| "one in b", |lc| lc + x, |lc| lc + CS::one(), |lc| lc + x);
    }
    Ok(())
}
impl Circuit<Scalar> for Parts {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        if self.split && CS::is_extensible() {
            let mut subs = Vec::new();
            for k in 0..self.parts {
                let mut sub = CS::new();
                sub.alloc_input(|| "temp ONE", || Ok(Scalar::ONE))?;
                part(&mut sub, k)?;
                subs.push(sub);
            }
            for sub in &subs {
                cs.extend(sub);
            }
            Ok(())
        } else {
            (0..self.parts).try_for_each(|k| part(cs, k))
        }
    }
}

#[test]
fn extend_equals_inline() {
    for parts in [1, 2, 5] {
        let inline = Recorder::synthesize(
            Parts {
                parts,
                split: false,
            },
            RecorderMode::Full,
        )
        .expect("inline");
        let split =
            Recorder::synthesize(Parts { parts, split: true }, RecorderMode::Full).expect("split");
        assert!(inline.is_satisfied() && split.is_satisfied());
        assert_eq!(inline.inputs, split.inputs);
        assert_eq!(inline.aux, split.aux);
        assert_eq!(inline.a, split.a);
        assert_eq!(inline.b, split.b);
        assert_eq!(inline.c, split.c);
        assert_eq!(inline.a_aux_density, split.a_aux_density);
        assert_eq!(inline.b_aux_density, split.b_aux_density);
        assert_eq!(inline.b_input_density, split.b_input_density);
        assert_eq!(inline.num_constraints, split.num_constraints);
        let w = Recorder::synthesize(Parts { parts, split: true }, RecorderMode::WitnessOnly)
            .expect("witness");
        assert_eq!(w.compact, Some(CompactAux::from_full(&inline.aux)));
        assert_eq!(w.inputs, inline.inputs);
    }
}

#[test]
fn density_extend() {
    let mut a = Density::from_bools((0..70).map(|i| i % 3 == 0));
    let b = Density::from_bools((0..130).map(|i| i % 5 == 0));
    let mut want: Vec<bool> = (0..70).map(|i| i % 3 == 0).collect();
    want.extend((0..130).map(|i| i % 5 == 0));
    a.extend(&b);
    assert_eq!(a, Density::from_bools(want.iter().copied()));
    let mut c = Density::new(64);
    c.extend_from(&b, 64);
    let mut want: Vec<bool> = vec![false; 64];
    want.extend((64..130).map(|i| i % 5 == 0));
    assert_eq!(c, Density::from_bools(want));
}

#[test]
fn hints_preallocate_domain() {
    let r = Recorder::with_hints(RecorderMode::Full, 2, 2, 3);
    let s = Recorder::synthesize_into(r, Tiny).expect("synthesis");
    assert!(s.a.capacity() >= 4);
    assert_eq!(s.domain_size(), 4);
}

#[test]
fn reusing_buffers_records_the_same_in_the_same_allocations() {
    let fresh = |parts| {
        Recorder::synthesize(
            Parts {
                parts,
                split: false,
            },
            RecorderMode::Full,
        )
        .expect("fresh")
    };
    // A larger partition's leftovers, then a smaller circuit recorded into them.
    let mut spent = fresh(5);
    spent.a_aux_density.set(0);
    let (pa, pc) = (spent.a.as_ptr(), spent.c.as_ptr());
    let want = fresh(2);
    let (c, i, a) = (want.num_constraints, want.inputs.len(), want.aux.len());
    let r = Recorder::reusing(RecorderMode::Full, spent, c, i, a);
    let got = Recorder::synthesize_into(
        r,
        Parts {
            parts: 2,
            split: false,
        },
    )
    .expect("reused");
    assert_eq!(got.a.as_ptr(), pa);
    assert_eq!(got.c.as_ptr(), pc);
    assert_eq!(got.inputs, want.inputs);
    assert_eq!(got.aux, want.aux);
    assert_eq!((&got.a, &got.b, &got.c), (&want.a, &want.b, &want.c));
    assert_eq!(got.a_aux_density, want.a_aux_density);
    assert_eq!(got.b_aux_density, want.b_aux_density);
    assert_eq!(got.b_input_density, want.b_input_density);
    assert_eq!(got.num_constraints, want.num_constraints);
    // Witness-only keeps a/b/c's allocations, empty.
    let w = Recorder::synthesize_into(
        Recorder::reusing(RecorderMode::WitnessOnly, got, c, i, a),
        Parts {
            parts: 2,
            split: false,
        },
    )
    .expect("witness");
    assert!(w.a.is_empty() && w.a.as_ptr() == pa);
    assert_eq!(w.compact, Some(CompactAux::from_full(&want.aux)));
}
