import type { Locale } from './zh-CN'

export const enUS: Locale = {
  approvals: {
    question: '[{number}] Tool {tool} asks for approval: {summary}\nWhy: {reason}',
    answer: '{choices}No answer within {timeout} denies it.',
    choices: 'Reply y to allow once · s for this session · a always · n to deny (also 允许 / 本会话 / 总是 / 拒绝; with several requests open, add the number: y {number}). ',
    'choices-confirm': 'Reply y to allow (this tool asks every time) · n to deny (also 允许 / 拒绝; with several requests open, add the number: y {number}). ',
    allowed: 'Allowed [{number}] {summary} ({scope}).',
    denied: 'Denied [{number}] {summary}.',
    closed: 'Request [{number}] has already ended.',
    which: '{count} requests are waiting for you; reply with a number, such as y {number}:',
    unknown: 'No request number {number} is waiting for you. These are:',
    item: '[{number}] {tool}: {summary}',
    preview: {
      text: 'What: ',
      command: 'Command: ',
      url: 'URL: ',
      diff: 'Changes: ',
    },
    'hidden-lines': '… {count} more lines',
    'hidden-chars': ' ({count} more characters)',
    'details-hint': 'Preview shortened: reply d or 详情 for all of it (with several requests open, add the number: d {number}).',
    details: 'Whole preview of [{number}] {summary} ({index}/{total}):',
    'no-preview': 'Request [{number}] has no preview.',
    expired: '[{number}] {summary}: timed out, denied.',
    'asked-approvers': 'Asking {users} to approve.',
    'asked-private': 'Asked {users} privately to approve: {summary}',
    'answered-by': '[{number}] {summary}: answered by {by} ({decision}).',
    'decision-deny': 'denied',
    button: {
      once: 'Allow once',
      session: 'This session',
      always: 'Always',
      deny: 'Deny',
      details: 'Details',
    },
    'button-used': 'This button no longer works: the request has ended or the button was used.',
    'button-not-yours': 'You may not answer request [{number}]: only the caller or an approver may.',
    reason: {
      default: 'no rule matches; {effect} tools need approval by default',
      rule: 'rule ({permission}) from {origin} asks for it',
      'rule-target': 'rule ({permission} on {target}) from {origin} asks for it',
      'rule-named': 'rule "{name}" from {origin} asks for it',
    },
    effect: {
      read: 'read',
      write: 'write',
      exec: 'exec',
    },
    scope: {
      once: 'once',
      session: 'for this session',
      always: 'always',
    },
    duration: {
      days: '{0} d',
      hours: '{0} h',
      minutes: '{0} min',
      seconds: '{0} s',
    },
  },
  pending: {
    description: 'List the requests in this channel waiting for your approval',
    messages: {
      header: 'Requests in this channel waiting for you ({count}); reply y or n with the number, such as y {number}:',
      item: '[{number}] {tool}: {summary} (times out in {left})',
      none: 'No request in this channel is waiting for you.',
      duration: {
        days: '{0} d',
        hours: '{0} h',
        minutes: '{0} min',
        seconds: '{0} s',
      },
    },
  },
  notices: {
    settled: 'Background task {id} ({tool}) {status}.',
    'settled-preview': 'Background task {id} ({tool}) {status}: {preview}',
    status: {
      running: 'is still running',
      succeeded: 'succeeded',
      failed: 'failed',
      cancelled: 'was cancelled',
      interrupted: 'was interrupted',
    },
  },
  commands: {
    dogu: {
      description: 'Dogu: tools for LLM agents',
    },
    'dogu.tools': {
      description: 'List the tools of this session, or search them',
      messages: {
        header: 'Tools of this session ({count}):',
        results: 'Best matches for "{query}":',
        item: '{name} — {description}',
        more: '… and {count} more',
        none: 'This session has no tools.',
        'no-match': 'No tool matches "{query}".',
      },
    },
    'dogu.run': {
      description: 'Call a tool as yourself (for debugging), through the usual permissions',
      messages: {
        result: '{tool}: {status}',
        background: '{tool} continues as background task {taskId}; you will be told when it ends.',
        truncated: '… (cut, {length} characters in all)',
        images: '({count} images not shown)',
        status: {
          ok: 'ok',
          error: 'error',
          denied: 'denied',
          timed_out: 'timed out',
          cancelled: 'cancelled',
          background: 'moved to the background',
        },
      },
    },
    'dogu.tasks': {
      description: 'List the background tasks of this session',
      messages: {
        header: 'Background tasks of this session ({count}):',
        item: '{id} {tool}: {status} (started {age} ago)',
        more: '… and {count} more',
        none: 'This session has no background tasks.',
        unavailable: 'The background service is not loaded.',
        status: {
          running: 'running',
          succeeded: 'succeeded',
          failed: 'failed',
          cancelled: 'cancelled',
          interrupted: 'interrupted',
        },
        duration: {
          days: '{0} d',
          hours: '{0} h',
          minutes: '{0} min',
          seconds: '{0} s',
        },
      },
    },
    'dogu.grants': {
      description: 'List the grants of this session and of you',
      options: {
        all: 'List the grants of every session and user',
      },
      messages: {
        header: 'Grants ({count}):',
        item: '{id} · {scope} · {permission}{target} · tool {tool} · approved by {by}',
        target: ' ({target})',
        more: '… and {count} more',
        none: 'No grants.',
        scope: {
          session: 'session',
          always: 'always',
        },
      },
    },
    'dogu.revoke': {
      description: 'Revoke a grant',
      messages: {
        revoked: 'Revoked grant {id}.',
        missing: 'No grant has the id {id}.',
      },
    },
    'dogu.mode': {
      description: 'Show or set the permission mode of this session',
      options: {
        reset: 'Return to the configured mode',
      },
      messages: {
        current: 'Permission mode of this session: {mode} (modes: {modes})',
        set: 'The permission mode of this session is now {mode}.',
        reset: 'The permission mode of this session is back to the configured one: {mode}.',
        invalid: 'There is no mode {mode}. Modes: {modes}',
      },
    },
  },
  config: {
    approvals: {
      $desc: 'Approvals in chat',
      enabled: 'Ask in the channel a call came from, and take the replies y / s / a / n.',
      route: 'Where a question goes: channel, the channel the call came from (mentioning the approvers to reach); private, a private message to each approver the bot can reach (the channel is told who was asked); both. With nobody to reach privately, it goes to the channel.',
      approvers: 'Whom to reach for questions an authority level or a Koishi permission decides: user ids (on the asking bot\'s platform) or platform:id. The users of a rule\'s approvers.users are always reached. Who may answer is still decided by the question\'s rule.',
      buttons: 'Platforms on which a question carries buttons (allow once / this session / always / deny / details); elsewhere replies are text only. An adapter without buttons may post their labels as plain text, so list only platforms that have them.',
    },
    notices: {
      $desc: 'Background task notices',
      enabled: 'When a background task ends, post a notice in the channel that started it.',
      preview: 'Longest preview of the result in a notice, in characters; 0 for none.',
    },
    commands: {
      $desc: 'Commands',
      enabled: 'Register the dogu.* commands.',
      authority: {
        $desc: 'Lowest authority each command needs.',
        tools: 'dogu.tools: list and search tools.',
        tasks: 'dogu.tasks: the background tasks of this session.',
        run: 'dogu.run: call a tool as yourself (still through permissions).',
        grants: 'dogu.grants: list grants.',
        revoke: 'dogu.revoke: revoke a grant.',
        mode: 'dogu.mode: show or set the permission mode of a session.',
      },
      maxOutput: 'Longest result dogu.run shows in chat, in characters.',
      listLimit: 'Most entries a list shows.',
    },
  },
}
