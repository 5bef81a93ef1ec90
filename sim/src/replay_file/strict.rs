//! JSON read strictly. serde_json keeps the last of two values under one key; a replay file that
//! names a key twice says two things at once, so it is refused, at any depth.

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};

/// Fails on the first object in `text` that names a key twice (and on malformed JSON).
pub fn check_no_duplicate_keys(text: &str) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    Unique.deserialize(&mut de)?;
    de.end()
}

/// Walks one JSON value, checking every object it holds.
struct Unique;

impl<'de> DeserializeSeed<'de> for Unique {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(Unique)
    }
}

impl<'de> Visitor<'de> for Unique {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Unique)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(A::Error::custom(format!("duplicate key `{key}`")));
            }
            map.next_value_seed(Unique)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::check_no_duplicate_keys;

    #[test]
    fn a_key_named_twice_is_refused_at_any_depth() {
        assert!(check_no_duplicate_keys(r#"{"a": [1, {"b": null}], "c": {"a": 1}}"#).is_ok());
        for text in [
            r#"{"a": 1, "a": 1}"#,
            r#"{"a": {"b": 1, "b": 2}}"#,
            r#"{"a": [{"choose": 0, "choose": 1}]}"#,
        ] {
            let e = check_no_duplicate_keys(text).unwrap_err().to_string();
            assert!(e.contains("duplicate key"), "{text}: {e}");
        }
        assert!(check_no_duplicate_keys(r#"{"a": 1} x"#).is_err());
    }
}
