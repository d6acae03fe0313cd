// The message catalogue's surface for the rest of core (src/index.ts picks the public names).
export type { MessageCatalogue, MessageTerms, RevisionBy } from './catalogue'
export { MESSAGE_LOCALES, type MessageLocale } from './message-locale'
export { catalogueFor, describeDenial, describeProblem, describeResult, describeRevision, messageLocale, messageTerms, renderResult, resultMessage } from './describe-result'
export { SECRET_CHANGED } from './edit-lines'
export { enUS } from './en-us'
export { DURATION_UNITS, type DurationOptions, type DurationUnit, durationUnitOf, formatDurationFor } from './format-duration-for'
export { zhCN } from './zh-cn'
