//! The protobuf wire format, as far as Kubernetes objects use it: varints and
//! length-delimited fields (the fixed-width types do not occur in them, and are refused).

use super::DecodeError;

/// A field's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scalar<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
}

/// The fields of a message, in order, as `(number, payload)`.
pub(super) fn fields(message: &[u8]) -> Fields<'_> {
    Fields { rest: message }
}

pub(super) struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u64, Scalar<'a>), DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let field = self.field();
        if field.is_err() {
            self.rest = &[];
        }
        Some(field)
    }
}

impl<'a> Fields<'a> {
    fn field(&mut self) -> Result<(u64, Scalar<'a>), DecodeError> {
        let key = varint(&mut self.rest)?;
        let number = key >> 3;
        match key & 7 {
            0 => Ok((number, Scalar::Varint(varint(&mut self.rest)?))),
            2 => {
                let len = usize::try_from(varint(&mut self.rest)?)
                    .map_err(|_| DecodeError::Malformed("a length past the body"))?;
                if len > self.rest.len() {
                    return Err(DecodeError::Malformed("a length past the body"));
                }
                let (bytes, rest) = self.rest.split_at(len);
                self.rest = rest;
                Ok((number, Scalar::Bytes(bytes)))
            }
            _ => Err(DecodeError::Malformed(
                "a wire type Kubernetes objects do not use",
            )),
        }
    }
}

fn varint(bytes: &mut &[u8]) -> Result<u64, DecodeError> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = bytes
            .split_first()
            .ok_or(DecodeError::Malformed("a varint cut short"))?;
        *bytes = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(DecodeError::Malformed("a varint longer than ten bytes"))
}
