//! Deserialization helpers shared by the wire types.
//!
//! The protocol lets a peer send `null` for any optional member ("a peer may
//! send `null`: accept it"). `Option<T>` already accepts `null`; these helpers
//! extend the same tolerance to members whose absence has a default value
//! (lists and flags), so `"relations": null` reads as "no relations" rather
//! than failing the whole message.

use serde::{Deserialize, Deserializer};

/// Deserialize `T`, reading an explicit `null` as `T::default()`.
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// Deserialize a string and map it through `from_wire`, borrowing from the
/// input when the deserializer allows so that known vocabulary words cost no
/// allocation (frames carry a `kind` each; a 4 MiB answer has thousands).
pub(crate) fn from_wire_str<'de, D, T>(
    deserializer: D,
    from_wire: fn(&str) -> T,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    struct WireStr<T>(fn(&str) -> T);
    impl<'de, T> serde::de::Visitor<'de> for WireStr<T> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a string")
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<T, E> {
            Ok((self.0)(v))
        }
    }
    deserializer.deserialize_str(WireStr(from_wire))
}
