//! The metadata event: which classes exist and how their fields are laid out. Every value
//! in a chunk is decoded (or skipped) by walking these descriptions.

use std::collections::HashMap;

use crate::cursor::{Cursor, RawStr};
use crate::Malformed;

/// Element nesting deeper than this is not something the JDK writes (it uses 4 levels).
const MAX_ELEMENT_DEPTH: u32 = 16;
/// Values nested deeper than this (inline structs in structs) are refused: a hostile
/// metadata could make a class contain itself.
const MAX_VALUE_DEPTH: u32 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Primitive {
    Boolean,
    Byte,
    Char,
    Short,
    Int,
    Long,
    Float,
    Double,
    String,
}

impl Primitive {
    fn of(class_name: &str) -> Option<Primitive> {
        Some(match class_name {
            "boolean" => Primitive::Boolean,
            "byte" => Primitive::Byte,
            "char" => Primitive::Char,
            "short" => Primitive::Short,
            "int" => Primitive::Int,
            "long" => Primitive::Long,
            "float" => Primitive::Float,
            "double" => Primitive::Double,
            "java.lang.String" => Primitive::String,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub(crate) name: String,
    pub(crate) type_id: u64,
    /// The value is an index into the constant pool of `type_id`.
    pub(crate) constant_pool: bool,
    pub(crate) array: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Class {
    pub(crate) name: String,
    pub(crate) primitive: Option<Primitive>,
    pub(crate) fields: Vec<Field>,
}

/// A decoded top-level field value; inline structs and arrays are skipped.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(RawStr),
    /// Index into the constant pool of the field's class.
    Constant(u64),
    Skipped,
}

#[derive(Debug, Default)]
pub(crate) struct Metadata {
    pub(crate) classes: HashMap<u64, Class>,
}

impl Metadata {
    /// Parses the body of a metadata event (after its size and type id).
    pub(crate) fn parse(c: &mut Cursor<'_>) -> Result<Metadata, Malformed> {
        let _start = c.long()?;
        let _duration = c.long()?;
        let _id = c.long()?;
        let n = c.count()?;
        let mut strings = Vec::with_capacity(n);
        for _ in 0..n {
            strings.push(match c.string()? {
                RawStr::Text(s) => s,
                _ => String::new(),
            });
        }
        let mut meta = Metadata::default();
        meta.element(c, &strings, 0, None)?;
        if meta.classes.is_empty() {
            return Err(Malformed::Metadata("no class descriptions"));
        }
        Ok(meta)
    }

    /// One element and its children; classes and their fields are kept, the rest
    /// (annotations, settings, regions) only read past.
    fn element(
        &mut self,
        c: &mut Cursor<'_>,
        strings: &[String],
        depth: u32,
        class: Option<u64>,
    ) -> Result<(), Malformed> {
        if depth > MAX_ELEMENT_DEPTH {
            return Err(Malformed::Metadata("elements nested too deep"));
        }
        let lookup = |i: i32| -> Result<&str, Malformed> {
            usize::try_from(i)
                .ok()
                .and_then(|i| strings.get(i))
                .map(String::as_str)
                .ok_or(Malformed::Metadata("string index out of range"))
        };
        let name = lookup(c.int()?)?;
        let n = c.count()?;
        let mut attributes = Vec::with_capacity(n.min(16));
        for _ in 0..n {
            let key = lookup(c.int()?)?;
            let value = lookup(c.int()?)?;
            attributes.push((key, value));
        }
        let attr = |k: &str| attributes.iter().find(|(key, _)| *key == k).map(|a| a.1);
        let mut this_class = None;
        match (name, class) {
            ("class", _) => {
                let id = attr("id")
                    .and_then(|v| v.parse::<u64>().ok())
                    .ok_or(Malformed::Metadata("class without a numeric id"))?;
                let class_name = attr("name").unwrap_or_default().to_string();
                self.classes.insert(
                    id,
                    Class {
                        primitive: Primitive::of(&class_name),
                        name: class_name,
                        fields: Vec::new(),
                    },
                );
                this_class = Some(id);
            }
            ("field", Some(owner)) => {
                let field = Field {
                    name: attr("name").unwrap_or_default().to_string(),
                    type_id: attr("class")
                        .and_then(|v| v.parse().ok())
                        .ok_or(Malformed::Metadata("field without a numeric class"))?,
                    constant_pool: attr("constantPool") == Some("true"),
                    array: attr("dimension").is_some_and(|d| d != "0"),
                };
                if let Some(cl) = self.classes.get_mut(&owner) {
                    cl.fields.push(field);
                }
            }
            _ => {}
        }
        let children = c.count()?;
        for _ in 0..children {
            self.element(c, strings, depth + 1, this_class)?;
        }
        Ok(())
    }

    pub(crate) fn class(&self, id: u64) -> Result<&Class, Malformed> {
        self.classes
            .get(&id)
            .ok_or(Malformed::Metadata("value of an undescribed class"))
    }

    /// Reads one value of a field: primitives and constant-pool indices are returned,
    /// inline structs and arrays are read past.
    pub(crate) fn value(&self, c: &mut Cursor<'_>, field: &Field) -> Result<Value, Malformed> {
        self.field(c, field, 0)
    }

    fn field(&self, c: &mut Cursor<'_>, field: &Field, depth: u32) -> Result<Value, Malformed> {
        if !field.array {
            return self.single(c, field.type_id, field.constant_pool, depth);
        }
        let n = c.count()?;
        for _ in 0..n {
            let before = c.remaining();
            self.single(c, field.type_id, field.constant_pool, depth + 1)?;
            // Elements of no bytes would let a hostile count (or nested counts) spin.
            if c.remaining() == before {
                return Err(Malformed::Metadata("array of values without bytes"));
            }
        }
        Ok(Value::Skipped)
    }

    fn single(
        &self,
        c: &mut Cursor<'_>,
        type_id: u64,
        constant_pool: bool,
        depth: u32,
    ) -> Result<Value, Malformed> {
        if constant_pool {
            return Ok(Value::Constant(c.long()? as u64));
        }
        if depth > MAX_VALUE_DEPTH {
            return Err(Malformed::Metadata("values nested too deep"));
        }
        let class = self.class(type_id)?;
        Ok(match class.primitive {
            Some(Primitive::Boolean) => Value::Bool(c.u8()? != 0),
            Some(Primitive::Byte) => Value::Int(i64::from(c.u8()? as i8)),
            Some(Primitive::Char | Primitive::Short) => Value::Int(i64::from(c.short()?)),
            Some(Primitive::Int) => Value::Int(i64::from(c.int()?)),
            Some(Primitive::Long) => Value::Int(c.long()?),
            Some(Primitive::Float) => Value::Float(f64::from(c.float()?)),
            Some(Primitive::Double) => Value::Float(c.double()?),
            Some(Primitive::String) => Value::Str(c.string()?),
            None => {
                for f in &class.fields {
                    self.field(c, f, depth + 1)?;
                }
                Value::Skipped
            }
        })
    }

    /// Reads one constant of `class_id` and returns the text it stands for, when the class
    /// is a string or a one-string holder (GC names, causes, VM operation names).
    pub(crate) fn constant_text(
        &self,
        c: &mut Cursor<'_>,
        class_id: u64,
    ) -> Result<Option<RawStr>, Malformed> {
        let class = self.class(class_id)?;
        if class.primitive.is_some() {
            return Ok(match self.single(c, class_id, false, 0)? {
                Value::Str(s) => Some(s),
                _ => None,
            });
        }
        let mut text = None;
        for f in &class.fields {
            let v = self.value(c, f)?;
            if text.is_none() {
                if let Value::Str(s) = v {
                    text = Some(s);
                }
            }
        }
        Ok(text)
    }
}
