/** The locales a catalogue exists for. */
export type MessageLocale = 'en-US' | 'zh-CN'

/** Every locale a catalogue exists for, the model's first. */
export const MESSAGE_LOCALES: readonly MessageLocale[] = Object.freeze(['en-US', 'zh-CN'])
