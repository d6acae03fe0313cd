// Koishi's i18n templates: `{name}` is a parameter, inserted as text (never as markup).
// en-US.ts has the same shape, checked by its type.
export const zhCN = {
  approvals: {
    question: '[{number}] 工具 {tool} 请求批准：{summary}\n原因：{reason}',
    answer: '{choices}{timeout}内无人回复即拒绝。',
    choices: '回复 y 允许一次 · s 本会话内允许 · a 总是允许 · n 拒绝（也可回复 允许 / 本会话 / 总是 / 拒绝；同时有多个请求时加上编号，如 y {number}）。',
    'choices-confirm': '回复 y 允许（此工具每次都要确认）· n 拒绝（也可回复 允许 / 拒绝；同时有多个请求时加上编号，如 y {number}）。',
    allowed: '已允许 [{number}] {summary}（{scope}）。',
    denied: '已拒绝 [{number}] {summary}。',
    closed: '请求 [{number}] 已经结束。',
    which: '有 {count} 个请求等你批准，请加上编号回复，如 y {number}：',
    unknown: '没有等你批准的 {number} 号请求。等你批准的有：',
    item: '[{number}] {tool}：{summary}',
    // A question's preview, bounded; `d` / `详情` posts all of it.
    preview: {
      text: '说明：',
      command: '命令：',
      url: '网址：',
      diff: '改动：',
    },
    'hidden-lines': '……另有 {count} 行',
    'hidden-chars': '（另有 {count} 字）',
    'details-hint': '预览未显示完整：回复 d 或 详情 查看全部（同时有多个请求时加上编号，如 d {number}）。',
    details: '[{number}] {summary} 的完整预览（{index}/{total}）：',
    'no-preview': '请求 [{number}] 没有预览。',
    expired: '[{number}] {summary}：已超时，已拒绝。',
    'asked-approvers': '请 {users} 审批。',
    'asked-private': '已私信 {users} 请求批准：{summary}',
    'answered-by': '[{number}] {summary}：已由 {by} 处理（{decision}）。',
    'decision-deny': '拒绝',
    button: {
      once: '允许一次',
      session: '本会话',
      always: '总是',
      deny: '拒绝',
      details: '详情',
    },
    'button-used': '这个按钮已失效：请求已结束，或按钮已经用过。',
    'button-not-yours': '你不能回答请求 [{number}]：只有调用者本人或审批人可以。',
    // Editing a call before approving it: `e {json}` / `改 {json}`.
    'edit-hint': '要先改参数再允许，回复 e {example}（只写要改的字段，JSON）。',
    'edit-allowed': '已按修改后的参数允许 [{number}] {summary}（{scope}）。改动：\n{changes}',
    'edit-denied': '[{number}] {summary}：修改后的调用被拒绝：{reason}',
    'edit-invalid': '修改没有生效，请求 [{number}] 仍在等待：{reason}',
    'edit-not-allowed': '你不能批准修改后的请求 [{number}]（它需要其他审批人），请求仍在等待。',
    'edit-unavailable': '请求 [{number}] 不能修改参数，只能回复允许或拒绝。',
    'edit-problem': {
      'too-long': '修改太长了（最多 {detail} 个字符），请到控制台修改。',
      shape: '请在 e 后面写要改的字段（JSON 对象），如 e {example}。',
      scope: '“{detail}”不是有效的范围：可写 s（本会话）或 a（总是），不写即仅此一次。',
      json: '修改不是有效的 JSON：{detail}',
      object: '修改必须是由字段组成的 JSON 对象，如 {example}。',
    },
    // Why a person is asked, worded here rather than in the engine's English.
    reason: {
      default: '没有匹配的规则，{effect}工具默认需要批准',
      rule: '规则 {permission}（{origin}）要求批准',
      'rule-target': '规则 {permission} {target}（{origin}）要求批准',
      'rule-named': '规则“{name}”（{origin}）要求批准',
    },
    effect: {
      read: '只读类',
      write: '写入类',
      exec: '执行类',
    },
    scope: {
      once: '仅此一次',
      session: '本会话内',
      always: '总是',
    },
    duration: {
      days: '{0} 天',
      hours: '{0} 小时',
      minutes: '{0} 分钟',
      seconds: '{0} 秒',
    },
  },
  // `dogu.pending`, registered with the chat approvals (it lists their questions).
  pending: {
    description: '列出本频道中等你批准的请求',
    messages: {
      header: '本频道中等你批准的请求（{count} 个），回复 y 编号 允许、n 编号 拒绝，如 y {number}：',
      item: '[{number}] {tool}：{summary}（{left}后超时）',
      none: '本频道中没有等你批准的请求。',
      duration: {
        days: '{0} 天',
        hours: '{0} 小时',
        minutes: '{0} 分钟',
        seconds: '{0} 秒',
      },
    },
  },
  audit: {
    description: '查看最新的审计记录（工具调用及其权限决定）',
    options: {
      user: '只看此用户的调用（用户 ID 或 平台:ID）',
      tool: '只看此工具',
      outcome: '只看此结果：ok、error、denied、timed_out、cancelled、background',
      count: '显示的条数',
      export: '把匹配的记录写入数据目录下的 JSONL 文件',
    },
    messages: {
      header: '审计记录，最新的在前（{count} 条）：',
      item: '{time} {user} {tool}：{outcome}',
      none: '没有匹配的审计记录。',
      disabled: '审计已关闭（audit.enabled 为 false）。',
      'bad-outcome': '没有 {outcome} 这种结果。可选：{outcomes}',
      'bad-count': '-n 须为不小于 1 的整数，而不是 {count}。',
      exported: '已将 {count} 条审计记录写入 {path}。',
      outcome: {
        ok: '成功',
        error: '出错',
        denied: '被拒绝',
        timed_out: '超时',
        cancelled: '已取消',
        background: '转入后台',
      },
      decided: {
        rule: '规则 {rule}（{decision}）',
        grant: '授权 {id}（{scope}）',
        mode: '模式 {mode}',
        default: '{effect} 工具的默认',
        middleware: '中间件 {name}（拒绝）',
        none: '未经权限检查',
      },
      decision: {
        allow: '允许',
        deny: '拒绝',
      },
      answered: '{by} 答复{decision}',
      'answered-via': '{by} 经 {via} 答复{decision}',
      edited: '（改过参数）',
      ended: {
        answer: '已答复',
        timeout: '无人及时答复',
        cancelled: '询问被取消',
        'no-asker': '无处询问',
        'askers-failed': '询问失败',
        stopped: '服务停止',
      },
      waited: '等待 {duration}',
      and: '，',
      ran: '运行 {duration}',
      ms: '{0} 毫秒',
      s: '{0} 秒',
    },
  },
  notices: {
    settled: '后台任务 {id}（{tool}）{status}。',
    'settled-preview': '后台任务 {id}（{tool}）{status}：{preview}',
    status: {
      running: '仍在运行',
      succeeded: '已完成',
      failed: '失败',
      cancelled: '已取消',
      interrupted: '已中断',
    },
  },
  commands: {
    dogu: {
      description: 'Dogu：供 LLM 智能体使用的工具',
    },
    'dogu.tools': {
      description: '列出本会话可用的工具，或按描述搜索',
      messages: {
        header: '本会话可用的工具（{count} 个）：',
        results: '与“{query}”最相关的工具：',
        item: '{name} — {description}',
        more: '……另有 {count} 个',
        none: '本会话没有可用的工具。',
        'no-match': '没有与“{query}”相关的工具。',
      },
    },
    'dogu.run': {
      description: '以你的身份调用一个工具（调试用），权限检查与平常相同',
      messages: {
        result: '{tool}：{status}',
        background: '{tool} 已转入后台任务 {taskId}，完成后会通知。',
        truncated: '……（已截断，共 {length} 字）',
        images: '（另有 {count} 张图片）',
        status: {
          ok: '成功',
          error: '出错',
          denied: '被拒绝',
          timed_out: '超时',
          cancelled: '已取消',
          background: '转入后台',
        },
      },
    },
    'dogu.tasks': {
      description: '列出本会话的后台任务',
      messages: {
        header: '本会话的后台任务（{count} 个）：',
        item: '{id} {tool}：{status}（{age}前开始）',
        more: '……另有 {count} 个',
        none: '本会话没有后台任务。',
        unavailable: '后台任务服务没有加载。',
        status: {
          running: '运行中',
          succeeded: '已完成',
          failed: '失败',
          cancelled: '已取消',
          interrupted: '已中断',
        },
        duration: {
          days: '{0} 天',
          hours: '{0} 小时',
          minutes: '{0} 分钟',
          seconds: '{0} 秒',
        },
      },
    },
    'dogu.grants': {
      description: '列出本会话与你的授权',
      options: {
        all: '列出所有会话与用户的授权',
      },
      messages: {
        header: '授权（{count} 条）：',
        item: '{id} · {scope} · {permission}{target} · 工具 {tool} · 由 {by} 批准',
        target: '（{target}）',
        more: '……另有 {count} 条',
        none: '没有授权。',
        scope: {
          session: '本会话',
          always: '总是',
        },
      },
    },
    'dogu.revoke': {
      description: '撤销一条授权',
      messages: {
        revoked: '已撤销授权 {id}。',
        missing: '没有 id 为 {id} 的授权。',
      },
    },
    'dogu.mode': {
      description: '查看或设置本会话的权限模式',
      options: {
        reset: '恢复为配置中的默认模式',
      },
      messages: {
        current: '本会话的权限模式：{mode}（可选：{modes}）',
        set: '本会话的权限模式已设为 {mode}。',
        reset: '本会话的权限模式已恢复为默认：{mode}。',
        invalid: '没有 {mode} 这种模式。可选：{modes}',
      },
    },
  },
  config: {
    approvals: {
      $desc: '在聊天中批准工具调用',
      enabled: '在调用所在的频道里询问，并接受回复 y / s / a / n。',
      route: '提问发到哪里：channel 发到调用所在的频道（并提及要找的审批人）；private 私信每一位能联系到的审批人（频道里告知问了谁）；both 两处都发。没有能私信的人时发到频道。',
      approvers: '由权限等级或 Koishi 权限决定审批人时要联系的用户：用户 ID（与提问的机器人同平台）或 平台:ID。规则 approvers.users 中的用户总会被联系。谁可以回答仍由问题的规则决定。',
      buttons: '在这些平台上，提问附带按钮（允许一次 / 本会话 / 总是 / 拒绝 / 详情）；其他平台只用文字回复。不支持按钮的适配器可能把按钮文字当作普通文字发出，所以只列出确实支持按钮的平台。',
    },
    notices: {
      $desc: '后台任务通知',
      enabled: '后台任务结束时，在发起它的频道里发一条通知。',
      preview: '通知中附带的结果预览的最大字数；0 表示不附带。',
    },
    commands: {
      $desc: '指令',
      enabled: '注册 dogu.* 指令。',
      authority: {
        $desc: '各指令所需的最低权限等级。',
        tools: 'dogu.tools：列出、搜索工具。',
        tasks: 'dogu.tasks：查看本会话的后台任务。',
        run: 'dogu.run：以自己的身份调用工具（仍经过权限检查）。',
        grants: 'dogu.grants：查看授权。',
        revoke: 'dogu.revoke：撤销授权。',
        mode: 'dogu.mode：查看或设置会话的权限模式。',
      },
      maxOutput: 'dogu.run 在聊天中显示的结果最大字数。',
      listLimit: '列表最多显示的条目数。',
    },
  },
}

/** The shape every locale of the plugin has. */
export type Locale = typeof zhCN
