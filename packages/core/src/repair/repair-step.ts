/** What a repair changed in a model's arguments, from a fixed vocabulary. */
export type RepairStep =
  /** The JSON was wrapped in a Markdown code fence. */
  | 'fence'
  /** Full-width punctuation (`，` `：` `“”` `｛｝`) outside string values became ASCII. */
  | 'full-width'
  /** Single-quoted (or curly-quoted) strings became double-quoted. */
  | 'quotes'
  /** Object keys without quotes got them. */
  | 'unquoted-keys'
  /** A comma before `}` or `]` was dropped. */
  | 'trailing-comma'
  /** `//` or `/* … *\/` comments were dropped. */
  | 'comments'
  /** Python's `True`, `False`, `None` became `true`, `false`, `null`. */
  | 'python-literals'
  /** The arguments were a JSON string holding the JSON object. */
  | 'double-encoded'
  /** A text cut off after a complete value was closed with the outermost object's `}` (nothing inner is closed: more may have followed). */
  | 'closing-brackets'

/** Every `RepairStep`, in the order a repair applies them. */
export const REPAIR_STEPS: readonly RepairStep[] = Object.freeze([
  'fence', 'double-encoded', 'full-width', 'comments', 'quotes', 'unquoted-keys', 'python-literals', 'trailing-comma', 'closing-brackets',
])

/** How a call's arguments were repaired: on `ToolResult.repaired`, in events and the audit log. */
export interface RepairRecord {
  /** The arguments text as the model sent it (cut to 2,000 characters). */
  from: string
  steps: readonly RepairStep[]
}
