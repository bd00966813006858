impl serde::Serialize for Pty {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if self.size.is_some() {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("process.PTY", len)?;
        if let Some(v) = self.size.as_ref() {
            struct_ser.serialize_field("size", v)?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for Pty {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "size",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Size,
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
                            "size" => Ok(GeneratedField::Size),
                            _ => Ok(GeneratedField::__SkipField__),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = Pty;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct process.PTY")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<Pty, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut size__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Size => {
                            if size__.is_some() {
                                return Err(serde::de::Error::duplicate_field("size"));
                            }
                            size__ = map_.next_value()?;
                        }
                        GeneratedField::__SkipField__ => {
                            let _ = map_.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(Pty {
                    size: size__,
                })
            }
        }
        deserializer.deserialize_struct("process.PTY", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for pty::Size {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if self.cols != 0 {
            len += 1;
        }
        if self.rows != 0 {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("process.PTY.Size", len)?;
        if self.cols != 0 {
            struct_ser.serialize_field("cols", &self.cols)?;
        }
        if self.rows != 0 {
            struct_ser.serialize_field("rows", &self.rows)?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for pty::Size {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "cols",
            "rows",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Cols,
            Rows,
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
                            "cols" => Ok(GeneratedField::Cols),
                            "rows" => Ok(GeneratedField::Rows),
                            _ => Ok(GeneratedField::__SkipField__),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = pty::Size;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct process.PTY.Size")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<pty::Size, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut cols__ = None;
                let mut rows__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Cols => {
                            if cols__.is_some() {
                                return Err(serde::de::Error::duplicate_field("cols"));
                            }
                            cols__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::Rows => {
                            if rows__.is_some() {
                                return Err(serde::de::Error::duplicate_field("rows"));
                            }
                            rows__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::__SkipField__ => {
                            let _ = map_.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(pty::Size {
                    cols: cols__.unwrap_or_default(),
                    rows: rows__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("process.PTY.Size", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for ProcessConfig {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if !self.cmd.is_empty() {
            len += 1;
        }
        if !self.args.is_empty() {
            len += 1;
        }
        if !self.envs.is_empty() {
            len += 1;
        }
        if self.cwd.is_some() {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("process.ProcessConfig", len)?;
        if !self.cmd.is_empty() {
            struct_ser.serialize_field("cmd", &self.cmd)?;
        }
        if !self.args.is_empty() {
            struct_ser.serialize_field("args", &self.args)?;
        }
        if !self.envs.is_empty() {
            struct_ser.serialize_field("envs", &self.envs)?;
        }
        if let Some(v) = self.cwd.as_ref() {
            struct_ser.serialize_field("cwd", v)?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for ProcessConfig {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "cmd",
            "args",
            "envs",
            "cwd",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Cmd,
            Args,
            Envs,
            Cwd,
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
                            "cmd" => Ok(GeneratedField::Cmd),
                            "args" => Ok(GeneratedField::Args),
                            "envs" => Ok(GeneratedField::Envs),
                            "cwd" => Ok(GeneratedField::Cwd),
                            _ => Ok(GeneratedField::__SkipField__),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = ProcessConfig;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct process.ProcessConfig")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<ProcessConfig, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut cmd__ = None;
                let mut args__ = None;
                let mut envs__ = None;
                let mut cwd__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Cmd => {
                            if cmd__.is_some() {
                                return Err(serde::de::Error::duplicate_field("cmd"));
                            }
                            cmd__ = Some(map_.next_value()?);
                        }
                        GeneratedField::Args => {
                            if args__.is_some() {
                                return Err(serde::de::Error::duplicate_field("args"));
                            }
                            args__ = Some(map_.next_value()?);
                        }
                        GeneratedField::Envs => {
                            if envs__.is_some() {
                                return Err(serde::de::Error::duplicate_field("envs"));
                            }
                            envs__ = Some(
                                map_.next_value::<std::collections::HashMap<_, _>>()?
                            );
                        }
                        GeneratedField::Cwd => {
                            if cwd__.is_some() {
                                return Err(serde::de::Error::duplicate_field("cwd"));
                            }
                            cwd__ = map_.next_value()?;
                        }
                        GeneratedField::__SkipField__ => {
                            let _ = map_.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(ProcessConfig {
                    cmd: cmd__.unwrap_or_default(),
                    args: args__.unwrap_or_default(),
                    envs: envs__.unwrap_or_default(),
                    cwd: cwd__,
                })
            }
        }
        deserializer.deserialize_struct("process.ProcessConfig", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for ProcessEvent {
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
        let mut struct_ser = serializer.serialize_struct("process.ProcessEvent", len)?;
        if let Some(v) = self.event.as_ref() {
            match v {
                process_event::Event::Start(v) => {
                    struct_ser.serialize_field("start", v)?;
                }
                process_event::Event::Data(v) => {
                    struct_ser.serialize_field("data", v)?;
                }
                process_event::Event::End(v) => {
                    struct_ser.serialize_field("end", v)?;
                }
                process_event::Event::Keepalive(v) => {
                    struct_ser.serialize_field("keepalive", v)?;
                }
            }
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for ProcessEvent {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "start",
            "data",
            "end",
            "keepalive",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Start,
            Data,
            End,
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
                            "data" => Ok(GeneratedField::Data),
                            "end" => Ok(GeneratedField::End),
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
            type Value = ProcessEvent;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct process.ProcessEvent")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<ProcessEvent, V::Error>
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
                            event__ = map_.next_value::<::std::option::Option<_>>()?.map(process_event::Event::Start)
;
                        }
                        GeneratedField::Data => {
                            if event__.is_some() {
                                return Err(serde::de::Error::duplicate_field("data"));
                            }
                            event__ = map_.next_value::<::std::option::Option<_>>()?.map(process_event::Event::Data)
;
                        }
                        GeneratedField::End => {
                            if event__.is_some() {
                                return Err(serde::de::Error::duplicate_field("end"));
                            }
                            event__ = map_.next_value::<::std::option::Option<_>>()?.map(process_event::Event::End)
;
                        }
                        GeneratedField::Keepalive => {
                            if event__.is_some() {
                                return Err(serde::de::Error::duplicate_field("keepalive"));
                            }
                            event__ = map_.next_value::<::std::option::Option<_>>()?.map(process_event::Event::Keepalive)
;
                        }
                        GeneratedField::__SkipField__ => {
                            let _ = map_.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(ProcessEvent {
                    event: event__,
                })
            }
        }
        deserializer.deserialize_struct("process.ProcessEvent", FIELDS, GeneratedVisitor)
    }
}
