/** What authorizing a call comes to: it runs, a person is asked, or it is refused. */
export type Decision = 'allow' | 'ask' | 'deny'
