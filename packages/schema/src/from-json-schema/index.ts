export { fromJsonSchema, type FromJsonSchemaOptions } from './from-json-schema'
