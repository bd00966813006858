impl serde::Serialize for CreateWatcherRequest {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if !self.path.is_empty() {
            len += 1;
        }
        if self.recursive {
            len += 1;
        }
        if self.include_entry {
            len += 1;
        }
        if self.allow_network_mounts {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("filesystem.CreateWatcherRequest", len)?;
        if !self.path.is_empty() {
            struct_ser.serialize_field("path", &self.path)?;
        }
        if self.recursive {
            struct_ser.serialize_field("recursive", &self.recursive)?;
        }
        if self.include_entry {
            struct_ser.serialize_field("includeEntry", &self.include_entry)?;
        }
        if self.allow_network_mounts {
            struct_ser.serialize_field("allowNetworkMounts", &self.allow_network_mounts)?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for CreateWatcherRequest {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "path",
            "recursive",
            "include_entry",
            "includeEntry",
            "allow_network_mounts",
            "allowNetworkMounts",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Path,
            Recursive,
            IncludeEntry,
            AllowNetworkMounts,
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
                            "path" => Ok(GeneratedField::Path),
                            "recursive" => Ok(GeneratedField::Recursive),
                            "includeEntry" | "include_entry" => Ok(GeneratedField::IncludeEntry),
                            "allowNetworkMounts" | "allow_network_mounts" => Ok(GeneratedField::AllowNetworkMounts),
                            _ => Ok(GeneratedField::__SkipField__),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = CreateWatcherRequest;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct filesystem.CreateWatcherRequest")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<CreateWatcherRequest, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut path__ = None;
                let mut recursive__ = None;
                let mut include_entry__ = None;
                let mut allow_network_mounts__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Path => {
                            if path__.is_some() {
                                return Err(serde::de::Error::duplicate_field("path"));
                            }
                            path__ = Some(map_.next_value()?);
                        }
                        GeneratedField::Recursive => {
                            if recursive__.is_some() {
                                return Err(serde::de::Error::duplicate_field("recursive"));
                            }
                            recursive__ = Some(map_.next_value()?);
                        }
                        GeneratedField::IncludeEntry => {
                            if include_entry__.is_some() {
                                return Err(serde::de::Error::duplicate_field("includeEntry"));
                            }
                            include_entry__ = Some(map_.next_value()?);
                        }
                        GeneratedField::AllowNetworkMounts => {
                            if allow_network_mounts__.is_some() {
                                return Err(serde::de::Error::duplicate_field("allowNetworkMounts"));
                            }
                            allow_network_mounts__ = Some(map_.next_value()?);
                        }
                        GeneratedField::__SkipField__ => {
                            let _ = map_.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(CreateWatcherRequest {
                    path: path__.unwrap_or_default(),
                    recursive: recursive__.unwrap_or_default(),
                    include_entry: include_entry__.unwrap_or_default(),
                    allow_network_mounts: allow_network_mounts__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("filesystem.CreateWatcherRequest", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for CreateWatcherResponse {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if !self.watcher_id.is_empty() {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("filesystem.CreateWatcherResponse", len)?;
        if !self.watcher_id.is_empty() {
            struct_ser.serialize_field("watcherId", &self.watcher_id)?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for CreateWatcherResponse {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "watcher_id",
            "watcherId",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            WatcherId,
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
                            "watcherId" | "watcher_id" => Ok(GeneratedField::WatcherId),
                            _ => Ok(GeneratedField::__SkipField__),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = CreateWatcherResponse;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct filesystem.CreateWatcherResponse")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<CreateWatcherResponse, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut watcher_id__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::WatcherId => {
                            if watcher_id__.is_some() {
                                return Err(serde::de::Error::duplicate_field("watcherId"));
                            }
                            watcher_id__ = Some(map_.next_value()?);
                        }
                        GeneratedField::__SkipField__ => {
                            let _ = map_.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(CreateWatcherResponse {
                    watcher_id: watcher_id__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("filesystem.CreateWatcherResponse", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for EntryInfo {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if !self.name.is_empty() {
            len += 1;
        }
        if self.r#type != 0 {
            len += 1;
        }
        if !self.path.is_empty() {
            len += 1;
        }
        if self.size != 0 {
            len += 1;
        }
        if self.mode != 0 {
            len += 1;
        }
        if !self.permissions.is_empty() {
            len += 1;
        }
        if !self.owner.is_empty() {
            len += 1;
        }
        if !self.group.is_empty() {
            len += 1;
        }
        if self.modified_time.is_some() {
            len += 1;
        }
        if self.symlink_target.is_some() {
            len += 1;
        }
        if !self.metadata.is_empty() {
            len += 1;
        }
        if self.is_symlink {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("filesystem.EntryInfo", len)?;
        if !self.name.is_empty() {
            struct_ser.serialize_field("name", &self.name)?;
        }
        if self.r#type != 0 {
            let v = FileType::try_from(self.r#type)
                .map_err(|_| serde::ser::Error::custom(format!("Invalid variant {}", self.r#type)))?;
            struct_ser.serialize_field("type", &v)?;
        }
        if !self.path.is_empty() {
            struct_ser.serialize_field("path", &self.path)?;
        }
        if self.size != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("size", ToString::to_string(&self.size).as_str())?;
        }
        if self.mode != 0 {
            struct_ser.serialize_field("mode", &self.mode)?;
        }
        if !self.permissions.is_empty() {
            struct_ser.serialize_field("permissions", &self.permissions)?;
        }
        if !self.owner.is_empty() {
            struct_ser.serialize_field("owner", &self.owner)?;
        }
        if !self.group.is_empty() {
            struct_ser.serialize_field("group", &self.group)?;
        }
        if let Some(v) = self.modified_time.as_ref() {
            struct_ser.serialize_field("modifiedTime", v)?;
        }
        if let Some(v) = self.symlink_target.as_ref() {
            struct_ser.serialize_field("symlinkTarget", v)?;
        }
        if !self.metadata.is_empty() {
            struct_ser.serialize_field("metadata", &self.metadata)?;
        }
        if self.is_symlink {
            struct_ser.serialize_field("isSymlink", &self.is_symlink)?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for EntryInfo {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "name",
            "type",
            "path",
            "size",
            "mode",
            "permissions",
            "owner",
            "group",
            "modified_time",
            "modifiedTime",
            "symlink_target",
            "symlinkTarget",
            "metadata",
            "is_symlink",
            "isSymlink",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Name,
            Type,
            Path,
            Size,
            Mode,
            Permissions,
            Owner,
            Group,
            ModifiedTime,
            SymlinkTarget,
            Metadata,
            IsSymlink,
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
                            "name" => Ok(GeneratedField::Name),
                            "type" => Ok(GeneratedField::Type),
                            "path" => Ok(GeneratedField::Path),
                            "size" => Ok(GeneratedField::Size),
                            "mode" => Ok(GeneratedField::Mode),
                            "permissions" => Ok(GeneratedField::Permissions),
                            "owner" => Ok(GeneratedField::Owner),
                            "group" => Ok(GeneratedField::Group),
                            "modifiedTime" | "modified_time" => Ok(GeneratedField::ModifiedTime),
                            "symlinkTarget" | "symlink_target" => Ok(GeneratedField::SymlinkTarget),
                            "metadata" => Ok(GeneratedField::Metadata),
                            "isSymlink" | "is_symlink" => Ok(GeneratedField::IsSymlink),
                            _ => Ok(GeneratedField::__SkipField__),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = EntryInfo;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct filesystem.EntryInfo")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<EntryInfo, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut name__ = None;
                let mut r#type__ = None;
                let mut path__ = None;
                let mut size__ = None;
                let mut mode__ = None;
                let mut permissions__ = None;
                let mut owner__ = None;
                let mut group__ = None;
                let mut modified_time__ = None;
                let mut symlink_target__ = None;
                let mut metadata__ = None;
                let mut is_symlink__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Name => {
                            if name__.is_some() {
                                return Err(serde::de::Error::duplicate_field("name"));
                            }
                            name__ = Some(map_.next_value()?);
                        }
                        GeneratedField::Type => {
                            if r#type__.is_some() {
                                return Err(serde::de::Error::duplicate_field("type"));
                            }
                            r#type__ = Some(map_.next_value::<FileType>()? as i32);
                        }
                        GeneratedField::Path => {
                            if path__.is_some() {
                                return Err(serde::de::Error::duplicate_field("path"));
                            }
                            path__ = Some(map_.next_value()?);
                        }
                        GeneratedField::Size => {
                            if size__.is_some() {
                                return Err(serde::de::Error::duplicate_field("size"));
                            }
                            size__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::Mode => {
                            if mode__.is_some() {
                                return Err(serde::de::Error::duplicate_field("mode"));
                            }
                            mode__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::Permissions => {
                            if permissions__.is_some() {
                                return Err(serde::de::Error::duplicate_field("permissions"));
                            }
                            permissions__ = Some(map_.next_value()?);
                        }
                        GeneratedField::Owner => {
                            if owner__.is_some() {
                                return Err(serde::de::Error::duplicate_field("owner"));
                            }
                            owner__ = Some(map_.next_value()?);
                        }
                        GeneratedField::Group => {
                            if group__.is_some() {
                                return Err(serde::de::Error::duplicate_field("group"));
                            }
                            group__ = Some(map_.next_value()?);
                        }
                        GeneratedField::ModifiedTime => {
                            if modified_time__.is_some() {
                                return Err(serde::de::Error::duplicate_field("modifiedTime"));
                            }
                            modified_time__ = map_.next_value()?;
                        }
                        GeneratedField::SymlinkTarget => {
                            if symlink_target__.is_some() {
                                return Err(serde::de::Error::duplicate_field("symlinkTarget"));
                            }
                            symlink_target__ = map_.next_value()?;
                        }
                        GeneratedField::Metadata => {
                            if metadata__.is_some() {
                                return Err(serde::de::Error::duplicate_field("metadata"));
                            }
                            metadata__ = Some(
                                map_.next_value::<std::collections::HashMap<_, _>>()?
                            );
                        }
                        GeneratedField::IsSymlink => {
                            if is_symlink__.is_some() {
                                return Err(serde::de::Error::duplicate_field("isSymlink"));
                            }
                            is_symlink__ = Some(map_.next_value()?);
                        }
                        GeneratedField::__SkipField__ => {
                            let _ = map_.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(EntryInfo {
                    name: name__.unwrap_or_default(),
                    r#type: r#type__.unwrap_or_default(),
                    path: path__.unwrap_or_default(),
                    size: size__.unwrap_or_default(),
                    mode: mode__.unwrap_or_default(),
                    permissions: permissions__.unwrap_or_default(),
                    owner: owner__.unwrap_or_default(),
                    group: group__.unwrap_or_default(),
                    modified_time: modified_time__,
                    symlink_target: symlink_target__,
                    metadata: metadata__.unwrap_or_default(),
                    is_symlink: is_symlink__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("filesystem.EntryInfo", FIELDS, GeneratedVisitor)
    }
}
