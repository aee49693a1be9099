//! Proof kinds, sector sizes, the numeric registered proofs of Filecoin's Go side (mapped onto
//! filecoin-proofs-api's enums), circuit ids, and the `miner_id` → `prover_id` rule.
use std::fmt;
use std::str::FromStr;

use filecoin_proofs_api::{RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof};

use crate::error::{FilecoinError, Result};

/// The Filecoin proof a request asks for: the wire protocol's `ProofKind` numbers 1–4.
/// (`SYNTHETIC` = 100, the benchmark circuits, is not a Filecoin proof: it is `cuzk-core`'s
/// kind, which wraps this one.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProofKind {
    /// PoRep commit phase 2 (`POREP_SEAL_COMMIT` = 1).
    #[default]
    PoRepSealCommit,
    /// SnapDeals sector update (`SNAP_DEALS_UPDATE` = 2).
    SnapDealsUpdate,
    /// One WindowPoSt partition (`WINDOW_POST_PARTITION` = 3).
    WindowPostPartition,
    /// WinningPoSt (`WINNING_POST` = 4).
    WinningPost,
}

impl ProofKind {
    /// Every kind, in reporting order.
    pub const ALL: [ProofKind; 4] = [
        ProofKind::PoRepSealCommit,
        ProofKind::SnapDealsUpdate,
        ProofKind::WindowPostPartition,
        ProofKind::WinningPost,
    ];

    /// From the wire number.
    pub fn from_wire(n: i32) -> Result<ProofKind> {
        ProofKind::ALL
            .into_iter()
            .find(|k| k.to_wire() == n)
            .ok_or(FilecoinError::UnsupportedKind(n))
    }

    /// The wire number.
    pub fn to_wire(self) -> i32 {
        match self {
            ProofKind::PoRepSealCommit => 1,
            ProofKind::SnapDealsUpdate => 2,
            ProofKind::WindowPostPartition => 3,
            ProofKind::WinningPost => 4,
        }
    }

    /// The most `vanilla_proofs` entries a request of this kind can carry, whatever its
    /// sector size: SnapDeals one per update partition (16 at 32 and 64 GiB), WindowPoSt one
    /// per sector of the partition (2349 at 32 GiB), WinningPoSt its one sector; PoRep
    /// travels in `vanilla_proof` and takes none. The server checks counts
    /// against this before it decodes a message (each entry costs far more decoded than on
    /// the wire); the planner then checks the exact count for the sector size.
    pub fn max_vanilla_proofs(self) -> usize {
        match self {
            ProofKind::PoRepSealCommit => 0,
            ProofKind::SnapDealsUpdate => 16,
            ProofKind::WindowPostPartition => 2349,
            ProofKind::WinningPost => 1,
        }
    }

    /// The protocol's name (`POREP_SEAL_COMMIT`, ..., `WINNING_POST`), as status, metrics and
    /// logs print it ([`fmt::Display`] writes it too).
    pub fn name(self) -> &'static str {
        match self {
            ProofKind::PoRepSealCommit => "POREP_SEAL_COMMIT",
            ProofKind::SnapDealsUpdate => "SNAP_DEALS_UPDATE",
            ProofKind::WindowPostPartition => "WINDOW_POST_PARTITION",
            ProofKind::WinningPost => "WINNING_POST",
        }
    }

    /// The short lowercase name people type (`porep`, `snap`, `wpost`, `winning`).
    pub fn short_name(self) -> &'static str {
        match self {
            ProofKind::PoRepSealCommit => "porep",
            ProofKind::SnapDealsUpdate => "snap",
            ProofKind::WindowPostPartition => "wpost",
            ProofKind::WinningPost => "winning",
        }
    }
}

impl fmt::Display for ProofKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A sector size Filecoin supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SectorSize {
    /// 2 KiB (test).
    S2KiB,
    /// 8 MiB (test).
    S8MiB,
    /// 512 MiB (test).
    S512MiB,
    /// 32 GiB.
    S32GiB,
    /// 64 GiB.
    S64GiB,
}

impl SectorSize {
    /// All sizes, smallest first (the order of the registered-proof numbering).
    pub const ALL: [SectorSize; 5] = [
        SectorSize::S2KiB,
        SectorSize::S8MiB,
        SectorSize::S512MiB,
        SectorSize::S32GiB,
        SectorSize::S64GiB,
    ];

    /// From a byte count; `field` names the request field for the error.
    pub fn from_bytes(bytes: u64, field: &'static str) -> Result<SectorSize> {
        SectorSize::ALL
            .into_iter()
            .find(|s| s.bytes() == bytes)
            .ok_or(FilecoinError::UnsupportedSectorSize { field, got: bytes })
    }

    /// Size in bytes.
    pub fn bytes(self) -> u64 {
        match self {
            SectorSize::S2KiB => 2 << 10,
            SectorSize::S8MiB => 8 << 20,
            SectorSize::S512MiB => 512 << 20,
            SectorSize::S32GiB => 32 << 30,
            SectorSize::S64GiB => 64 << 30,
        }
    }

    /// Position in the registered-proof numbering (0 = 2 KiB ... 4 = 64 GiB).
    pub fn index(self) -> u64 {
        match self {
            SectorSize::S2KiB => 0,
            SectorSize::S8MiB => 1,
            SectorSize::S512MiB => 2,
            SectorSize::S32GiB => 3,
            SectorSize::S64GiB => 4,
        }
    }

    /// The suffix used in circuit ids: `2k`, `8m`, `512m`, `32g`, `64g`.
    pub fn short(self) -> &'static str {
        match self {
            SectorSize::S2KiB => "2k",
            SectorSize::S8MiB => "8m",
            SectorSize::S512MiB => "512m",
            SectorSize::S32GiB => "32g",
            SectorSize::S64GiB => "64g",
        }
    }

    /// Parses `2KiB`, `8MiB`, `512MiB`, `32GiB`, `64GiB` (case-insensitive, also `2k`, `32g`,
    /// or a plain byte count).
    pub fn parse(s: &str) -> Result<SectorSize> {
        let t = s.trim().to_ascii_lowercase();
        let found = SectorSize::ALL.into_iter().find(|size| {
            let short = size.short();
            let long = format!("{}ib", short);
            t == short || t == long || t == format!("{}b", short) || t == size.bytes().to_string()
        });
        found.ok_or_else(|| FilecoinError::InvalidValue {
            field: "sector_size",
            reason: format!(
                "`{s}` is not a sector size (expected 2KiB, 8MiB, 512MiB, 32GiB or 64GiB)"
            ),
        })
    }
}

impl fmt::Display for SectorSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            SectorSize::S2KiB => "2KiB",
            SectorSize::S8MiB => "8MiB",
            SectorSize::S512MiB => "512MiB",
            SectorSize::S32GiB => "32GiB",
            SectorSize::S64GiB => "64GiB",
        };
        f.write_str(s)
    }
}

/// A registered proof, decoded from the Go-side number for a given kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegisteredProof {
    /// PoRep (`RegisteredSealProof`).
    Seal(RegisteredSealProof),
    /// WinningPoSt or WindowPoSt (`RegisteredPoStProof`).
    PoSt(RegisteredPoStProof),
    /// SnapDeals (`RegisteredUpdateProof`).
    Update(RegisteredUpdateProof),
}

impl RegisteredProof {
    /// Decodes `n` as the registered proof a request of `kind` carries.
    ///
    /// Numbers follow go-state-types / filecoin-ffi: WindowPoSt `…V1_1` (10–14) maps to
    /// filecoin-proofs-api's `StackedDrgWindow…V1_2`, as the FFI does.
    pub fn decode(kind: ProofKind, n: u64) -> Result<RegisteredProof> {
        match kind {
            ProofKind::PoRepSealCommit => seal_from_u64(n).map(RegisteredProof::Seal),
            ProofKind::SnapDealsUpdate => update_from_u64(n).map(RegisteredProof::Update),
            ProofKind::WinningPost => {
                let p = post_from_u64(n)?;
                if p.typ() != filecoin_proofs::PoStType::Winning {
                    return Err(FilecoinError::WrongProofType {
                        kind: "WinningPoSt",
                        got: n,
                        name: format!("{p:?}"),
                        expected: "StackedDrgWinning…V1 (0–4)",
                    });
                }
                Ok(RegisteredProof::PoSt(p))
            }
            ProofKind::WindowPostPartition => {
                let p = post_from_u64(n)?;
                if p.typ() != filecoin_proofs::PoStType::Window {
                    return Err(FilecoinError::WrongProofType {
                        kind: "WindowPoSt",
                        got: n,
                        name: format!("{p:?}"),
                        expected: "StackedDrgWindow…V1 (5–9) or …V1_1 (10–14)",
                    });
                }
                Ok(RegisteredProof::PoSt(p))
            }
        }
    }

    /// The sector size this proof is for.
    pub fn sector_size(self) -> SectorSize {
        let idx = match self {
            RegisteredProof::Seal(p) => p as u64 % 5,
            RegisteredProof::PoSt(p) => p as u64 % 5,
            RegisteredProof::Update(p) => p as u64 % 5,
        };
        SectorSize::ALL[idx as usize]
    }

    /// The Go-side number (inverse of [`RegisteredProof::decode`]).
    pub fn to_u64(self) -> u64 {
        match self {
            RegisteredProof::Seal(p) => p as u64,
            RegisteredProof::PoSt(p) => p as u64,
            RegisteredProof::Update(p) => p as u64,
        }
    }
}

/// `RegisteredSealProof` from its number (0–19).
pub fn seal_from_u64(n: u64) -> Result<RegisteredSealProof> {
    use RegisteredSealProof::*;
    const ALL: [RegisteredSealProof; 20] = [
        StackedDrg2KiBV1,
        StackedDrg8MiBV1,
        StackedDrg512MiBV1,
        StackedDrg32GiBV1,
        StackedDrg64GiBV1,
        StackedDrg2KiBV1_1,
        StackedDrg8MiBV1_1,
        StackedDrg512MiBV1_1,
        StackedDrg32GiBV1_1,
        StackedDrg64GiBV1_1,
        StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
        StackedDrg8MiBV1_1_Feat_SyntheticPoRep,
        StackedDrg512MiBV1_1_Feat_SyntheticPoRep,
        StackedDrg32GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg64GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg2KiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg8MiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg512MiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg32GiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg64GiBV1_2_Feat_NonInteractivePoRep,
    ];
    ALL.get(n as usize)
        .copied()
        .filter(|_| n < 20)
        .ok_or(FilecoinError::UnknownRegisteredProof {
            family: "RegisteredSealProof",
            got: n,
            expected: "0–19",
        })
}

/// `RegisteredPoStProof` from its Go-side number (0–14; 10–14 are `…V1_1` on the Go side and
/// `…V1_2` in filecoin-proofs-api).
pub fn post_from_u64(n: u64) -> Result<RegisteredPoStProof> {
    use RegisteredPoStProof::*;
    const ALL: [RegisteredPoStProof; 15] = [
        StackedDrgWinning2KiBV1,
        StackedDrgWinning8MiBV1,
        StackedDrgWinning512MiBV1,
        StackedDrgWinning32GiBV1,
        StackedDrgWinning64GiBV1,
        StackedDrgWindow2KiBV1,
        StackedDrgWindow8MiBV1,
        StackedDrgWindow512MiBV1,
        StackedDrgWindow32GiBV1,
        StackedDrgWindow64GiBV1,
        StackedDrgWindow2KiBV1_2,
        StackedDrgWindow8MiBV1_2,
        StackedDrgWindow512MiBV1_2,
        StackedDrgWindow32GiBV1_2,
        StackedDrgWindow64GiBV1_2,
    ];
    ALL.get(n as usize)
        .copied()
        .filter(|_| n < 15)
        .ok_or(FilecoinError::UnknownRegisteredProof {
            family: "RegisteredPoStProof",
            got: n,
            expected: "0–14",
        })
}

/// `RegisteredUpdateProof` from its number (0–4).
pub fn update_from_u64(n: u64) -> Result<RegisteredUpdateProof> {
    use RegisteredUpdateProof::*;
    const ALL: [RegisteredUpdateProof; 5] = [
        StackedDrg2KiBV1,
        StackedDrg8MiBV1,
        StackedDrg512MiBV1,
        StackedDrg32GiBV1,
        StackedDrg64GiBV1,
    ];
    ALL.get(n as usize)
        .copied()
        .filter(|_| n < 5)
        .ok_or(FilecoinError::UnknownRegisteredProof {
            family: "RegisteredUpdateProof",
            got: n,
            expected: "0–4",
        })
}

/// The 32-byte `prover_id` of a miner, as the Filecoin FFI derives it: the payload of the ID
/// address (the unsigned LEB128 encoding of `miner_id`) at the start of a zeroed array.
pub fn prover_id_from_miner_id(miner_id: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    let mut v = miner_id;
    let mut i = 0;
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out[i] = byte;
            break;
        }
        out[i] = byte | 0x80;
        i += 1;
    }
    out
}

/// The circuit families; with a sector size they name one circuit shape (one SRS).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CircuitKind {
    /// PoRep (all versions share one circuit per size).
    PoRep,
    /// SnapDeals.
    Snap,
    /// WindowPoSt (V1 and V1_2 share one circuit per size).
    WindowPost,
    /// WinningPoSt.
    WinningPost,
}

impl CircuitKind {
    /// The circuit-id prefix.
    pub fn prefix(self) -> &'static str {
        match self {
            CircuitKind::PoRep => "porep",
            CircuitKind::Snap => "snap",
            CircuitKind::WindowPost => "wpost",
            CircuitKind::WinningPost => "winning",
        }
    }
}

/// Names one circuit shape and so one SRS: `porep-32g`, `snap-8m`, `wpost-2k`, `winning-64g`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CircuitId {
    /// The circuit family.
    pub kind: CircuitKind,
    /// The sector size.
    pub size: SectorSize,
}

impl CircuitId {
    /// A circuit id.
    pub fn new(kind: CircuitKind, size: SectorSize) -> CircuitId {
        CircuitId { kind, size }
    }

    /// Every circuit id (4 families × 5 sizes).
    pub fn all() -> Vec<CircuitId> {
        let kinds = [
            CircuitKind::PoRep,
            CircuitKind::Snap,
            CircuitKind::WindowPost,
            CircuitKind::WinningPost,
        ];
        kinds
            .into_iter()
            .flat_map(|k| {
                SectorSize::ALL
                    .into_iter()
                    .map(move |s| CircuitId::new(k, s))
            })
            .collect()
    }
}

impl fmt::Display for CircuitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.kind.prefix(), self.size.short())
    }
}

impl FromStr for CircuitId {
    type Err = FilecoinError;

    fn from_str(s: &str) -> Result<CircuitId> {
        CircuitId::all()
            .into_iter()
            .find(|c| c.to_string() == s)
            .ok_or_else(|| FilecoinError::UnknownCircuitId(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    /// The front door's limits agree with filecoin-proofs' own tables for every size.
    #[test]
    fn max_vanilla_proofs_matches_the_library_tables() {
        let window = filecoin_proofs::constants::WINDOW_POST_SECTOR_COUNT
            .read()
            .unwrap();
        let winning = filecoin_proofs::constants::WINNING_POST_SECTOR_COUNT;
        let mut snap = 0;
        for size in [
            SectorSize::S2KiB,
            SectorSize::S8MiB,
            SectorSize::S512MiB,
            SectorSize::S32GiB,
            SectorSize::S64GiB,
        ] {
            let bytes = size.bytes();
            snap = snap.max(storage_proofs_update::constants::partition_count(
                (bytes / 32) as usize,
            ));
        }
        assert_eq!(ProofKind::SnapDealsUpdate.max_vanilla_proofs(), snap);
        assert_eq!(
            ProofKind::WindowPostPartition.max_vanilla_proofs(),
            *window.values().max().unwrap()
        );
        assert_eq!(ProofKind::WinningPost.max_vanilla_proofs(), winning);
    }

    use super::*;

    #[test]
    fn prover_id_is_leb128_of_miner_id() {
        let p = prover_id_from_miner_id(1000);
        assert_eq!(&p[..3], &[0xe8, 0x07, 0x00]);
        assert!(p[2..].iter().all(|&b| b == 0));
        assert_eq!(prover_id_from_miner_id(0)[0], 0);
        let max = prover_id_from_miner_id(u64::MAX);
        assert_eq!(
            &max[..10],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
    }

    #[test]
    fn numbering_matches_the_go_side() {
        assert_eq!(
            seal_from_u64(8).unwrap(),
            RegisteredSealProof::StackedDrg32GiBV1_1
        );
        assert_eq!(
            seal_from_u64(6).unwrap(),
            RegisteredSealProof::StackedDrg8MiBV1_1
        );
        assert!(seal_from_u64(20).is_err());
        assert_eq!(
            post_from_u64(13).unwrap(),
            RegisteredPoStProof::StackedDrgWindow32GiBV1_2
        );
        assert!(post_from_u64(15).is_err());
        assert!(update_from_u64(5).is_err());
        for n in 0..20 {
            let p = RegisteredProof::decode(ProofKind::PoRepSealCommit, n).unwrap();
            assert_eq!(p.to_u64(), n);
            assert_eq!(p.sector_size().index(), n % 5);
            if let RegisteredProof::Seal(s) = p {
                assert_eq!(u64::from(s.sector_size()), p.sector_size().bytes());
            }
        }
        for n in 0..15 {
            let kind = if n < 5 {
                ProofKind::WinningPost
            } else {
                ProofKind::WindowPostPartition
            };
            let p = RegisteredProof::decode(kind, n).unwrap();
            if let RegisteredProof::PoSt(s) = p {
                assert_eq!(u64::from(s.sector_size()), p.sector_size().bytes());
            }
            let other = if n < 5 {
                ProofKind::WindowPostPartition
            } else {
                ProofKind::WinningPost
            };
            assert!(matches!(
                RegisteredProof::decode(other, n),
                Err(FilecoinError::WrongProofType { .. })
            ));
        }
    }

    #[test]
    fn circuit_ids_round_trip() {
        for id in CircuitId::all() {
            assert_eq!(id.to_string().parse::<CircuitId>().unwrap(), id);
        }
        assert_eq!(
            CircuitId::new(CircuitKind::PoRep, SectorSize::S32GiB).to_string(),
            "porep-32g"
        );
        assert!("porep-33g".parse::<CircuitId>().is_err());
        assert_eq!(SectorSize::parse("2KiB").unwrap(), SectorSize::S2KiB);
        assert_eq!(SectorSize::parse("32g").unwrap(), SectorSize::S32GiB);
        assert_eq!(SectorSize::parse("2048").unwrap(), SectorSize::S2KiB);
    }
}
