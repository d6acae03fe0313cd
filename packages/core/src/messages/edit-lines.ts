/**
 * The line an edit's changes hold when only a secret field changed (its value is never
 * shown): a catalogue renders it in its locale, as it does the rest of an edit note.
 */
export const SECRET_CHANGED = 'a secret field was changed (its value is not shown)'
