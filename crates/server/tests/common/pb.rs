//! A hand-rolled protobuf writer: messages built field by field, by number and wire type, as
//! any client's encoder would write them, so tests pin the bytes rather than our prost types.
pub const VARINT: u64 = 0;
pub const LEN: u64 = 2;

pub fn varint(mut v: u64, out: &mut Vec<u8>) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// Hand-rolled protobuf writer: fields appended in the order called.
#[derive(Default)]
pub struct W(pub Vec<u8>);

impl W {
    fn tag(&mut self, field: u64, wire: u64) {
        varint((field << 3) | wire, &mut self.0);
    }
    pub fn u(mut self, field: u64, v: u64) -> Self {
        self.tag(field, VARINT);
        varint(v, &mut self.0);
        self
    }
    pub fn b(mut self, field: u64, bytes: &[u8]) -> Self {
        self.tag(field, LEN);
        varint(bytes.len() as u64, &mut self.0);
        self.0.extend_from_slice(bytes);
        self
    }
    /// A proto3 scalar as Go's (and any proto3) encoder writes it: left out when zero.
    pub fn v(self, field: u64, v: u64) -> Self {
        if v == 0 {
            self
        } else {
            self.u(field, v)
        }
    }
    /// Proto3 bytes or a string: left out when empty.
    pub fn bv(self, field: u64, bytes: &[u8]) -> Self {
        if bytes.is_empty() {
            self
        } else {
            self.b(field, bytes)
        }
    }
    /// A repeated bytes field: each item in order.
    pub fn bvs(self, field: u64, items: &[Vec<u8>]) -> Self {
        items.iter().fold(self, |w, b| w.bv(field, b))
    }
    pub fn s(self, field: u64, s: &str) -> Self {
        self.b(field, s.as_bytes())
    }
    pub fn m(self, field: u64, msg: W) -> Self {
        self.b(field, &msg.0)
    }
}
