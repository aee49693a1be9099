//! Synthetic circuits for tests and benchmarks: a shape-configurable random circuit
//! ([`SyntheticSpec`] / [`SyntheticCircuit`]) and a real-gadget SHA-256 circuit
//! ([`Sha256Circuit`]), both deterministic from a seed and always satisfied.
//!
//! Spec strings: `synthetic:constraints=65536,inputs=4,aux=1.0,a=1.0,b=0.25,bool=0.92,seed=7`
//! (every key optional; `constraints` also takes `2^16`) and `sha256:blocks=4,seed=7`.
use bellpepper::gadgets::{boolean::AllocatedBit, boolean::Boolean, multipack, sha256::sha256};
use bellpepper_core::{Circuit, ConstraintSystem, LinearCombination, SynthesisError};
use blstrs::Scalar;
use ff::Field;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use std::{fmt, str::FromStr};

/// Why a circuit spec string could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// The string does not start with a known circuit kind.
    #[error("unknown circuit kind in `{0}` (expected `synthetic:` or `sha256:`)")]
    Kind(String),
    /// A `key=value` pair is malformed or has an unknown key.
    #[error("bad spec item `{0}`")]
    Item(String),
    /// A value is out of range.
    #[error("`{key}` out of range: {why}")]
    Range {
        /// The key.
        key: &'static str,
        /// What is wrong.
        why: &'static str,
    },
}

/// Shape of a [`SyntheticCircuit`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SyntheticSpec {
    /// Constraints enforced by the circuit (not counting bellperson's input constraints).
    pub constraints: usize,
    /// Public inputs, not counting ONE.
    pub inputs: usize,
    /// Aux variables per constraint.
    pub aux_ratio: f64,
    /// Fraction of aux variables that appear in some A.
    pub a_density: f64,
    /// Fraction of aux variables that appear in some B.
    pub b_density: f64,
    /// Fraction of aux values that are 0 or 1.
    pub bool_fraction: f64,
    /// Seed of the structure and the witness.
    pub seed: u64,
}

impl Default for SyntheticSpec {
    /// A Filecoin-PoRep-like shape at 2^16 constraints.
    fn default() -> Self {
        SyntheticSpec {
            constraints: 1 << 16,
            inputs: 4,
            aux_ratio: 1.0,
            a_density: 1.0,
            b_density: 0.25,
            bool_fraction: 0.92,
            seed: 7,
        }
    }
}

impl SyntheticSpec {
    /// The default shape with `constraints` constraints.
    pub fn with_constraints(constraints: usize) -> Self {
        SyntheticSpec {
            constraints,
            ..SyntheticSpec::default()
        }
    }

    /// Number of aux variables.
    pub fn num_aux(&self) -> usize {
        (self.constraints as f64 * self.aux_ratio).round() as usize
    }

    /// The circuit synthesized by a recorder sized for it ([`crate::Recorder::with_hints`]:
    /// no vector grows while it runs).
    pub fn synthesize(
        &self,
        mode: crate::RecorderMode,
    ) -> Result<crate::Synthesized, SynthesisError> {
        let inputs = self.inputs + 1;
        let rec = crate::Recorder::with_hints(mode, self.constraints, inputs, self.num_aux());
        crate::Recorder::synthesize_into(rec, self.circuit())
    }

    /// The circuit.
    pub fn circuit(&self) -> SyntheticCircuit {
        SyntheticCircuit { spec: *self }
    }

    fn parse_items(s: &str) -> Result<SyntheticSpec, SpecError> {
        let mut spec = SyntheticSpec::default();
        for item in s.split(',').filter(|i| !i.trim().is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| SpecError::Item(item.to_string()))?;
            let bad = || SpecError::Item(item.to_string());
            let frac = |key: &'static str| -> Result<f64, SpecError> {
                let x: f64 = v.trim().parse().map_err(|_| bad())?;
                if !(0.0..=1.0).contains(&x) {
                    return Err(SpecError::Range {
                        key,
                        why: "must be within 0..=1",
                    });
                }
                Ok(x)
            };
            match k.trim() {
                "constraints" | "n" => spec.constraints = parse_size(v.trim()).ok_or_else(bad)?,
                "inputs" => spec.inputs = v.trim().parse().map_err(|_| bad())?,
                "aux" => {
                    let x: f64 = v.trim().parse().map_err(|_| bad())?;
                    if !(0.0..=16.0).contains(&x) {
                        return Err(SpecError::Range {
                            key: "aux",
                            why: "must be within 0..=16",
                        });
                    }
                    spec.aux_ratio = x;
                }
                "a" => spec.a_density = frac("a")?,
                "b" => spec.b_density = frac("b")?,
                "bool" => spec.bool_fraction = frac("bool")?,
                "seed" => spec.seed = v.trim().parse().map_err(|_| bad())?,
                _ => return Err(bad()),
            }
        }
        if spec.constraints > 1 << 30 {
            return Err(SpecError::Range {
                key: "constraints",
                why: "at most 2^30",
            });
        }
        if spec.inputs > 1 << 24 {
            return Err(SpecError::Range {
                key: "inputs",
                why: "at most 2^24",
            });
        }
        Ok(spec)
    }
}

/// `65536`, `2^16` or `1<<16`.
fn parse_size(v: &str) -> Option<usize> {
    if let Some(e) = v.strip_prefix("2^").or_else(|| v.strip_prefix("1<<")) {
        let e: u32 = e.parse().ok()?;
        return 1usize.checked_shl(e).filter(|_| e < 40);
    }
    v.parse().ok()
}

impl FromStr for SyntheticSpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        let rest = s
            .strip_prefix("synthetic:")
            .or_else(|| (s == "synthetic").then_some(""))
            .ok_or_else(|| SpecError::Kind(s.to_string()))?;
        SyntheticSpec::parse_items(rest)
    }
}

impl fmt::Display for SyntheticSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "synthetic:constraints={},inputs={},aux={},a={},b={},bool={},seed={}",
            self.constraints,
            self.inputs,
            self.aux_ratio,
            self.a_density,
            self.b_density,
            self.bool_fraction,
            self.seed
        )
    }
}

/// A random circuit of a given shape, satisfied by its own deterministic witness.
///
/// Structure: aux variable `k` of the A set goes into the A of constraint `k mod constraints`,
/// likewise for B; empty A or B sides use ONE; public input `i` goes into the B of constraint
/// `i mod constraints`. Each C is the product A·B as a multiple of ONE, so every constraint holds.
#[derive(Clone, Copy, Debug)]
pub struct SyntheticCircuit {
    /// The shape.
    pub spec: SyntheticSpec,
}

/// A coefficient: mostly ONE (as in real circuits), sometimes a small or random value.
fn coeff(rng: &mut ChaCha8Rng) -> Scalar {
    match rng.next_u32() % 4 {
        0 | 1 => Scalar::ONE,
        2 => Scalar::from(u64::from(rng.next_u32() % 1000 + 2)),
        _ => {
            let c = Scalar::random(&mut *rng);
            if bool::from(c.is_zero()) {
                Scalar::ONE
            } else {
                c
            }
        }
    }
}

impl Circuit<Scalar> for SyntheticCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let spec = self.spec;
        let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
        let n_aux = spec.num_aux();

        let mut input_vars = Vec::with_capacity(spec.inputs);
        let mut input_vals = Vec::with_capacity(spec.inputs);
        for _ in 0..spec.inputs {
            let v = Scalar::random(&mut rng);
            input_vars.push(cs.alloc_input(|| "input", || Ok(v))?);
            input_vals.push(v);
        }

        // Aux values; membership in the A and B sets.
        let mut aux_vals = Vec::with_capacity(n_aux);
        let mut aux_vars = Vec::with_capacity(n_aux);
        let mut a_set = Vec::new();
        let mut b_set = Vec::new();
        let mut c_only = Vec::new();
        let thresh = |p: f64| (p * u32::MAX as f64) as u64;
        for k in 0..n_aux {
            let r = u64::from(rng.next_u32());
            let v = if r < thresh(spec.bool_fraction) || spec.bool_fraction >= 1.0 {
                if rng.next_u32() & 1 == 0 {
                    Scalar::ZERO
                } else {
                    Scalar::ONE
                }
            } else {
                Scalar::random(&mut rng)
            };
            aux_vars.push(cs.alloc(|| "aux", || Ok(v))?);
            aux_vals.push(v);
            if spec.a_density >= 1.0 || u64::from(rng.next_u32()) < thresh(spec.a_density) {
                a_set.push(k);
            }
            let in_a = a_set.last() == Some(&k);
            if spec.b_density >= 1.0 || u64::from(rng.next_u32()) < thresh(spec.b_density) {
                b_set.push(k);
            } else if !in_a {
                c_only.push(k);
            }
        }

        let m = spec.constraints;
        if m == 0 {
            return Ok(());
        }
        let one = CS::one();
        for j in 0..m {
            let mut a_lc = LinearCombination::<Scalar>::zero();
            let mut a_val = Scalar::ZERO;
            for &k in a_set.iter().skip(j).step_by(m) {
                let c = coeff(&mut rng);
                a_lc = a_lc + (c, aux_vars[k]);
                a_val += c * aux_vals[k];
            }
            let mut b_lc = LinearCombination::<Scalar>::zero();
            let mut b_val = Scalar::ZERO;
            for &k in b_set.iter().skip(j).step_by(m) {
                let c = coeff(&mut rng);
                b_lc = b_lc + (c, aux_vars[k]);
                b_val += c * aux_vals[k];
            }
            for i in (j..spec.inputs).step_by(m) {
                let c = coeff(&mut rng);
                b_lc = b_lc + (c, input_vars[i]);
                b_val += c * input_vals[i];
            }
            // Keep both sides non-trivial so the product is a real multiplication.
            if a_val == Scalar::ZERO || rng.next_u32() % 8 == 0 {
                let c = coeff(&mut rng);
                a_lc = a_lc + (c, one);
                a_val += c;
            }
            if b_val == Scalar::ZERO {
                let c = coeff(&mut rng);
                b_lc = b_lc + (c, one);
                b_val += c;
            }
            // Aux variables in neither A nor B appear in C (a real circuit has no
            // unconstrained variables); ONE's coefficient keeps C = A·B.
            let mut c_lc = LinearCombination::<Scalar>::zero();
            let mut c_val = Scalar::ZERO;
            for &k in c_only.iter().skip(j).step_by(m) {
                let c = coeff(&mut rng);
                c_lc = c_lc + (c, aux_vars[k]);
                c_val += c * aux_vals[k];
            }
            let c_lc = c_lc + (a_val * b_val - c_val, one);
            cs.enforce(|| "c", |_| a_lc, |_| b_lc, |_| c_lc);
        }
        Ok(())
    }
}

/// SHA-256 of a seeded `blocks`-block message through bellpepper's gadget; the digest's
/// first 248 bits are packed into one public input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sha256Circuit {
    /// Number of 512-bit compression blocks (at least 1).
    pub blocks: usize,
    /// Seed of the message.
    pub seed: u64,
}

impl Sha256Circuit {
    /// Message bytes: `64·blocks − 9` so that padding makes exactly `blocks` blocks.
    pub fn message(&self) -> Vec<u8> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut msg = vec![0u8; (64 * self.blocks.max(1)).saturating_sub(9)];
        rng.fill_bytes(&mut msg);
        msg
    }

    /// The public input the circuit exposes (excluding ONE).
    pub fn public_inputs(&self) -> Vec<Scalar> {
        use sha2_free::digest;
        let d = digest(&self.message());
        let bits = multipack::bytes_to_bits(&d);
        multipack::compute_multipacking::<Scalar>(&bits[..248])
    }
}

/// A minimal software SHA-256 (for the expected public input in tests and the CLI).
mod sha2_free {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];

    /// SHA-256 of `msg`.
    pub fn digest(msg: &[u8]) -> [u8; 32] {
        let mut h: [u32; 8] = [
            0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
            0x5be0cd19,
        ];
        let mut data = msg.to_vec();
        data.push(0x80);
        while data.len() % 64 != 56 {
            data.push(0);
        }
        data.extend_from_slice(&((msg.len() as u64) * 8).to_be_bytes());
        for block in data.chunks(64) {
            let mut w = [0u32; 64];
            for (i, c) in block.chunks(4).enumerate() {
                w[i] = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
            }
            for i in 16..64 {
                let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
                let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
                w[i] = w[i - 16]
                    .wrapping_add(s0)
                    .wrapping_add(w[i - 7])
                    .wrapping_add(s1);
            }
            let mut v = h;
            for i in 0..64 {
                let s1 = v[4].rotate_right(6) ^ v[4].rotate_right(11) ^ v[4].rotate_right(25);
                let ch = (v[4] & v[5]) ^ (!v[4] & v[6]);
                let t1 = v[7]
                    .wrapping_add(s1)
                    .wrapping_add(ch)
                    .wrapping_add(K[i])
                    .wrapping_add(w[i]);
                let s0 = v[0].rotate_right(2) ^ v[0].rotate_right(13) ^ v[0].rotate_right(22);
                let maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
                let t2 = s0.wrapping_add(maj);
                v = [
                    t1.wrapping_add(t2),
                    v[0],
                    v[1],
                    v[2],
                    v[3].wrapping_add(t1),
                    v[4],
                    v[5],
                    v[6],
                ];
            }
            for (x, y) in h.iter_mut().zip(v) {
                *x = x.wrapping_add(y);
            }
        }
        let mut out = [0u8; 32];
        for (i, x) in h.iter().enumerate() {
            out[4 * i..4 * i + 4].copy_from_slice(&x.to_be_bytes());
        }
        out
    }
}

impl Circuit<Scalar> for Sha256Circuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let msg = self.message();
        let bits = multipack::bytes_to_bits(&msg);
        let mut input = Vec::with_capacity(bits.len());
        for b in bits {
            input.push(Boolean::from(AllocatedBit::alloc(
                cs.namespace(|| "bit"),
                Some(b),
            )?));
        }
        let digest = sha256(cs.namespace(|| "sha256"), &input)?;
        multipack::pack_into_inputs(cs.namespace(|| "pack"), &digest[..248])
    }
}

impl FromStr for Sha256Circuit {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        let rest = s
            .strip_prefix("sha256:")
            .ok_or_else(|| SpecError::Kind(s.to_string()))?;
        let mut c = Sha256Circuit { blocks: 1, seed: 7 };
        for item in rest.split(',').filter(|i| !i.trim().is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| SpecError::Item(item.to_string()))?;
            let bad = || SpecError::Item(item.to_string());
            match k.trim() {
                "blocks" => c.blocks = v.trim().parse().map_err(|_| bad())?,
                "seed" => c.seed = v.trim().parse().map_err(|_| bad())?,
                _ => return Err(bad()),
            }
        }
        if c.blocks == 0 || c.blocks > 1 << 20 {
            return Err(SpecError::Range {
                key: "blocks",
                why: "must be within 1..=2^20",
            });
        }
        Ok(c)
    }
}

impl fmt::Display for Sha256Circuit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:blocks={},seed={}", self.blocks, self.seed)
    }
}

/// Any circuit a spec string can name.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum CircuitSpec {
    /// `synthetic:...`
    Synthetic(SyntheticSpec),
    /// `sha256:...`
    Sha256(Sha256Circuit),
}

impl FromStr for CircuitSpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        if s.starts_with("sha256:") {
            Ok(CircuitSpec::Sha256(s.parse()?))
        } else {
            Ok(CircuitSpec::Synthetic(s.parse()?))
        }
    }
}

impl fmt::Display for CircuitSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CircuitSpec::Synthetic(s) => s.fmt(f),
            CircuitSpec::Sha256(s) => s.fmt(f),
        }
    }
}

impl Circuit<Scalar> for CircuitSpec {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        match self {
            CircuitSpec::Synthetic(s) => s.circuit().synthesize(cs),
            CircuitSpec::Sha256(s) => s.synthesize(cs),
        }
    }
}

impl CircuitSpec {
    /// The public inputs (excluding ONE) a proof of this circuit is verified against.
    pub fn public_inputs(&self) -> Vec<Scalar> {
        match self {
            CircuitSpec::Synthetic(s) => {
                let mut rng = ChaCha8Rng::seed_from_u64(s.seed);
                (0..s.inputs).map(|_| Scalar::random(&mut rng)).collect()
            }
            CircuitSpec::Sha256(s) => s.public_inputs(),
        }
    }

    /// Rough constraint count, for preallocation hints.
    pub fn approx_constraints(&self) -> usize {
        match self {
            CircuitSpec::Synthetic(s) => s.constraints,
            // ~27k constraints per compression block with bellpepper's gadget.
            CircuitSpec::Sha256(s) => s.blocks * 27_000,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recorder::{Recorder, RecorderMode};

    #[test]
    fn parse_display_roundtrip() {
        let s: SyntheticSpec =
            "synthetic:constraints=2^10,inputs=3,aux=0.5,a=0.5,b=0.25,bool=0.9,seed=3"
                .parse()
                .expect("parse");
        assert_eq!(s.constraints, 1024);
        assert_eq!(s.to_string().parse::<SyntheticSpec>(), Ok(s));
        assert_eq!(
            "synthetic:".parse::<SyntheticSpec>(),
            Ok(SyntheticSpec::default())
        );
        assert!("synthetic:a=2".parse::<SyntheticSpec>().is_err());
        assert!("synthetic:zzz=1".parse::<SyntheticSpec>().is_err());
        assert!("foo:a=1".parse::<SyntheticSpec>().is_err());
        let c: CircuitSpec = "sha256:blocks=2".parse().expect("sha");
        assert_eq!(c.to_string(), "sha256:blocks=2,seed=7");
        assert!("sha256:blocks=0".parse::<CircuitSpec>().is_err());
    }

    #[test]
    fn synthetic_shapes_are_satisfied() {
        for spec in [
            "synthetic:constraints=100,inputs=1",
            "synthetic:constraints=64,inputs=0,aux=0",
            "synthetic:constraints=37,inputs=9,a=0,b=0",
            "synthetic:constraints=50,inputs=2,a=1,b=1,bool=1",
            "synthetic:constraints=20,inputs=30,aux=3,bool=0",
        ] {
            let s: SyntheticSpec = spec.parse().expect("parse");
            let syn = Recorder::synthesize(s.circuit(), RecorderMode::Full).expect("synth");
            assert!(syn.is_satisfied(), "{spec}");
            assert_eq!(syn.inputs.len(), s.inputs + 1);
            assert_eq!(syn.aux.len(), s.num_aux());
            assert_eq!(syn.num_constraints, s.constraints);
            if s.a_density == 1.0 {
                assert_eq!(syn.a_aux_density.count_ones(), syn.aux.len());
            }
            if s.b_density == 0.0 {
                assert_eq!(syn.b_aux_density.count_ones(), 0);
            }
            assert_eq!(
                &syn.inputs[1..],
                &CircuitSpec::Synthetic(s).public_inputs()[..]
            );
        }
    }

    #[test]
    fn sha256_is_satisfied_and_matches_software() {
        let c = Sha256Circuit { blocks: 1, seed: 1 };
        let syn = Recorder::synthesize(c, RecorderMode::Full).expect("synth");
        assert!(syn.is_satisfied());
        assert_eq!(&syn.inputs[1..], &c.public_inputs()[..]);
        // Known vector: SHA-256("abc").
        let d = sha2_free::digest(b"abc");
        assert_eq!(d[..4], [0xba, 0x78, 0x16, 0xbf]);
    }
}
