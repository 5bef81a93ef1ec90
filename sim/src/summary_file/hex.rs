//! 64-bit digests in JSON as 16 hex digits, as replay files write them: a JSON number above
//! 2^53 does not survive a JavaScript JSON step (two digests can come back as one).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Writes the digests as 16-hex-digit strings (`#[serde(with = "hex")]`).
pub fn serialize<S: Serializer>(digests: &Option<Vec<u64>>, s: S) -> Result<S::Ok, S::Error> {
    digests
        .as_ref()
        .map(|d| d.iter().map(|x| format!("{x:016x}")).collect::<Vec<_>>())
        .serialize(s)
}

/// Reads digests written by `serialize`; anything but 16 hex digits is an error.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u64>>, D::Error> {
    let Some(hex) = Option::<Vec<String>>::deserialize(d)? else {
        return Ok(None);
    };
    hex.iter()
        .map(|h| match u64::from_str_radix(h, 16) {
            Ok(x) if h.len() == 16 => Ok(x),
            _ => Err(serde::de::Error::custom(format!(
                "digest '{h}' is not 16 hex digits"
            ))),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

#[cfg(test)]
mod tests {
    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Digests(#[serde(with = "super")] Option<Vec<u64>>);

    #[test]
    fn digests_round_trip_as_hex_strings_and_numbers_are_refused() {
        let d = Digests(Some(vec![0, u64::MAX, (1 << 53) + 1]));
        let json = serde_json::to_string(&d).unwrap();
        assert_eq!(
            json,
            r#"["0000000000000000","ffffffffffffffff","0020000000000001"]"#
        );
        assert_eq!(serde_json::from_str::<Digests>(&json).unwrap(), d);
        assert!(serde_json::from_str::<Digests>("[9007199254740993]").is_err());
        assert!(serde_json::from_str::<Digests>(r#"["12"]"#).is_err());
    }
}
