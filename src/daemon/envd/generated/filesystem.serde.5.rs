impl serde::Serialize for WatchDirResponse {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if self.event.is_some() {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("filesystem.WatchDirResponse", len)?;
        if let Some(v) = self.event.as_ref() {
            match v {
                watch_dir_response::Event::Start(v) => {
                    struct_ser.serialize_field("start", v)?;
                }
                watch_dir_response::Event::Filesystem(v) => {
                    struct_ser.serialize_field("filesystem", v)?;
                }
                watch_dir_response::Event::Keepalive(v) => {
                    struct_ser.serialize_field("keepalive", v)?;
                }
            }
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for WatchDirResponse {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "start",
            "filesystem",
            "keepalive",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Start,
            Filesystem,
            Keepalive,
            __SkipField__,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "start" => Ok(GeneratedField::Start),
                            "filesystem" => Ok(GeneratedField::Filesystem),
                            "keepalive" => Ok(GeneratedField::Keepalive),
                            _ => Ok(GeneratedField::__SkipField__),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = WatchDirResponse;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct filesystem.WatchDirResponse")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<WatchDirResponse, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut event__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Start => {
                            if event__.is_some() {
                                return Err(serde::de::Error::duplicate_field("start"));
                            }
                            event__ = map_.next_value::<::std::option::Option<_>>()?.map(watch_dir_response::Event::Start)
;
                        }
                        GeneratedField::Filesystem => {
                            if event__.is_some() {
                                return Err(serde::de::Error::duplicate_field("filesystem"));
                            }
                            event__ = map_.next_value::<::std::option::Option<_>>()?.map(watch_dir_response::Event::Filesystem)
;
                        }
                        GeneratedField::Keepalive => {
                            if event__.is_some() {
                                return Err(serde::de::Error::duplicate_field("keepalive"));
                            }
                            event__ = map_.next_value::<::std::option::Option<_>>()?.map(watch_dir_response::Event::Keepalive)
;
                        }
                        GeneratedField::__SkipField__ => {
                            let _ = map_.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(WatchDirResponse {
                    event: event__,
                })
            }
        }
        deserializer.deserialize_struct("filesystem.WatchDirResponse", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for watch_dir_response::KeepAlive {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let len = 0;
        let struct_ser = serializer.serialize_struct("filesystem.WatchDirResponse.KeepAlive", len)?;
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for watch_dir_response::KeepAlive {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            __SkipField__,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                            Ok(GeneratedField::__SkipField__)
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = watch_dir_response::KeepAlive;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct filesystem.WatchDirResponse.KeepAlive")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<watch_dir_response::KeepAlive, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                while map_.next_key::<GeneratedField>()?.is_some() {
                    let _ = map_.next_value::<serde::de::IgnoredAny>()?;
                }
                Ok(watch_dir_response::KeepAlive {
                })
            }
        }
        deserializer.deserialize_struct("filesystem.WatchDirResponse.KeepAlive", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for watch_dir_response::StartEvent {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let len = 0;
        let struct_ser = serializer.serialize_struct("filesystem.WatchDirResponse.StartEvent", len)?;
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for watch_dir_response::StartEvent {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            __SkipField__,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                            Ok(GeneratedField::__SkipField__)
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = watch_dir_response::StartEvent;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct filesystem.WatchDirResponse.StartEvent")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<watch_dir_response::StartEvent, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                while map_.next_key::<GeneratedField>()?.is_some() {
                    let _ = map_.next_value::<serde::de::IgnoredAny>()?;
                }
                Ok(watch_dir_response::StartEvent {
                })
            }
        }
        deserializer.deserialize_struct("filesystem.WatchDirResponse.StartEvent", FIELDS, GeneratedVisitor)
    }
}
