import type { ApproverPolicy } from '../types/approver'
import type { ExpectedValue, IssueDetail, ShownValue } from '@dogu/schema'
import { shownKey } from '../duplicate-key'
import { SECRET_MASK } from '../secret-fields'
import type { AbortParams, ArgumentProblem, ArgumentsRefusal, MiddlewareFailure, RevisionRefusal } from '../result-params'
import type { AskedFor, Denial, RuleCause } from '../types/denial'
import type { PermissionSpec } from '../types/effect'
import type { MessageCatalogue, MessageTerms, RevisionBy } from './catalogue'
import { SECRET_CHANGED } from './edit-lines'
import { formatDurationFor } from './format-duration-for'

const TERMS: MessageTerms = {
  status: { ok: '成功', error: '出错', denied: '被拒绝', timed_out: '超时', cancelled: '已取消', background: '转入后台', rate_limited: '超出配额' },
  code: {
    unknown_tool: '未知工具',
    invalid_arguments: '参数无效',
    tool_error: '工具出错',
    permission_denied: '权限被拒绝',
    no_permission_service: '未加载权限服务',
    timed_out: '超时',
    cancelled: '已取消',
    background: '转入后台',
    middleware_error: '中间件出错',
    rate_limited: '已限流',
    quota_unavailable: '配额无法计数',
    output_invalid: '结果不符合输出模式',
  },
  mode: { default: '默认', readOnly: '只读', acceptEdits: '接受编辑', trust: '信任' },
  effect: { read: '只读', write: '写入', exec: '执行' },
  scope: { once: '仅此一次', session: '本会话', always: '总是' },
  repairStep: {
    'fence': '去掉了代码围栏',
    'full-width': '全角标点改为半角',
    'quotes': '单引号改为双引号',
    'unquoted-keys': '给键名加上引号',
    'trailing-comma': '去掉了多余的逗号',
    'comments': '去掉了注释',
    'python-literals': '`True`、`False`、`None` 改为 `true`、`false`、`null`',
    'double-encoded': '解开了二次编码的 JSON',
    'closing-brackets': '补上了结尾的括号',
  },
}

const VERB = { allow: '允许了它', ask: '要求审批', deny: '拒绝了它' } as const

/** The zh-CN catalogue: every message a person reads about a result, from its parameters. */
export const zhCN: MessageCatalogue = {
  locale: 'zh-CN',
  terms: TERMS,
  results: {
    unknown_tool: ({ name, suggestions, available, more }) => {
      if (name === undefined) return '未知工具：调用没有给出工具名。'
      const hint = suggestions.length ? `是不是想用 ${suggestions.map((n) => `"${n}"`).join('、')}？` : ''
      return `未知工具 "${name}"。${hint}可用的工具：${available.join('、')}${more ? '……' : ''}。`
    },
    invalid_arguments: (params) => argumentsRefusal(params),
    tool_error: ({ message }) => `错误：${message}`,
    permission_denied: (denial) => `权限被拒绝：${denialText(denial)}`,
    no_permission_service: ({ tool, effect }) => `权限被拒绝：没有加载权限服务，只能运行只读工具（"${tool}" 属于${TERMS.effect[effect]}类工具）。`,
    timed_out: (params) => aborted('超时', params),
    cancelled: (params) => aborted('已取消', params),
    background: ({ taskId, resumed }) => resumed
      ? `重启后获批，调用作为后台任务 ${taskId} 运行，可用 task_status 查看。`
      : `调用仍在运行，已转为后台任务 ${taskId} 继续；稍后可用 task_status 查看，或用 task_cancel 停止。`,
    middleware_error: (params) => `错误：${middlewareName(params)}出错：${middlewareFailure(params.failure)}`,
    rate_limited: (params) => params.source === 'quota'
      ? `已限流：配额 "${params.quota}" 已用完（每 ${duration(params.windowMs)} ${params.max} 次）；请 ${duration(params.retryAfterMs, true)}后再试。`
      : `已限流：${params.reason.replace(/^Rate limited:\s*/, '')}`,
    quota_unavailable: ({ error }) => `错误：调用没有运行：无法计数它的配额（${error}）。`,
    output_invalid: ({ problems }) => `错误：工具的结果不符合它的输出模式（${problems.map((problem) => `${problem.path}：${problemText(problem)}`).join('；')}）。`,
  },
  denial: denialText,
  decided: decidedText,
  problem: problemText,
  problemLine: (problem) => `- ${problem.path}：${problemText(problem)}`,
  revision: revisionText,
  repaired: (steps) => `注意：参数不是有效的 JSON，运行前已修复（${steps.map((step) => TERMS.repairStep[step as keyof MessageTerms['repairStep']] ?? step).join('、')}）。`,
  edited: (changes) => `有人在批准前修改了参数，调用按这些改动运行：\n${changes.map((line) => line === SECRET_CHANGED ? '一个机密字段被修改了（不显示它的值）' : line).join('\n')}`,
  folded: (count, unit) => `[已折叠 ${count} ${unit === 'characters' ? '个字符' : '个参数'}]`,
  duration: (ms, options) => formatDurationFor(ms, 'zh-CN', options),
}

function duration(ms: number, up = false): string {
  return formatDurationFor(ms, 'zh-CN', up ? { round: 'up' } : {})
}

function validationText(problems: readonly ArgumentProblem[]): string {
  return ['参数无效：', ...problems.map((problem) => `- ${problem.path}：${problemText(problem)}`)].join('\n')
}

function argumentsRefusal(refusal: ArgumentsRefusal): string {
  switch (refusal.kind) {
    case 'validation': return validationText(refusal.problems)
    case 'invalid_json': {
      const where = refusal.line !== undefined && refusal.column !== undefined ? `第 ${refusal.line} 行第 ${refusal.column} 列`
        : refusal.position !== undefined ? `第 ${refusal.position + 1} 个字符` : ''
      const near = refusal.excerpt ? `${where ? '，' : ''}附近是 \`${refusal.excerpt}\`` : ''
      const at = where || near ? `（${where}${near}）` : ''
      return `参数不是有效的 JSON${at}，请发送一个 JSON 对象。${refusal.unrepairable === undefined ? '' : '自动修复也无法不靠猜测修好它。'}`
    }
    case 'not_object': return `参数必须是 JSON 对象，实际是${VALUE_TYPE[refusal.got]}。${refusal.unrepairable === undefined ? '' : '自动修复也无法不靠猜测修好它。'}`
    case 'too_large': return `参数太长：${refusal.length} 个字符，最多接受 ${refusal.max} 个。`
    case 'duplicate_key': return `参数在 ${refusal.path} 处把键 ${shownKey(refusal.key)} 写了两次：无法知道要的是哪个值。每个键只写一次。`
    case 'forbidden_key': return `参数在 ${refusal.path}${refusal.deep ? '（嵌套过深）' : ''} 处用了禁止的键，请改名或删去。`
    case 'invalid_encoding': return `参数无效：${refusal.path} 必须是 JSON 编码的字符串（按它的描述写 JSON 文本）。`
  }
}

const VALUE_TYPE: Record<Extract<ArgumentsRefusal, { kind: 'not_object' }>['got'], string> = {
  null: '`null`', array: '数组', string: '字符串', number: '数字', boolean: '布尔值', bigint: '大整数', function: '函数', symbol: '符号',
}

function aborted(label: string, params: AbortParams): string {
  const content = `${label}：${abortReason(params)}。`
  return params.lastProgress ? `${content}最后的进度：${params.lastProgress}` : content
}

function abortReason(params: AbortParams): string {
  switch (params.cause) {
    case 'timeout': return `运行 ${formatDurationFor(params.timeoutMs, 'zh-CN', { parts: 2 })}仍未完成`
    case 'queue_timeout': return `等了 ${formatDurationFor(params.timeoutMs, 'zh-CN', { parts: 2 })}仍没有空位运行（${params.caps}）`
    case 'batch': return '这批调用被取消了'
    case 'task': return params.by === 'model' ? '模型用 task_cancel 取消了这个任务' : params.by === 'service_stopped' ? '后台服务停止了' : params.reason ?? '后台任务被取消了'
    case 'unloaded': return params.tool === undefined ? '工具服务停止了' : `工具 "${params.tool}" 被${params.replaced ? '替换' : '卸载'}了`
    case 'other': return params.reason
  }
}

/** Where a rule or a middleware came from: a plugin's label (`plugin "policy"`) in words, anything else (`koishi.yml`) as it is. */
function origin(label: string): string {
  const plugin = /^plugin (".*")$/.exec(label)
  return plugin ? `插件 ${plugin[1]}` : label
}

function middlewareName({ middleware, plugin }: { middleware: string; plugin?: string }): string {
  return plugin ? `中间件 "${middleware}"（${origin(plugin)}）` : `中间件 "${middleware}"`
}

function middlewareFailure(failure: MiddlewareFailure): string {
  switch (failure.kind) {
    case 'threw': return failure.message
    case 'no_result': return failure.got === undefined ? '它什么也没返回，没有给出结果' : `它返回了 ${failure.got}，不是一个结果`
    case 'bad_status': return `它返回的结果状态 ${failure.status} 无效`
    case 'no_content': return '它返回的结果没有 `content` 字符串'
    case 'rewrite': return revisionText(failure.refusal, 'middleware')
  }
}

function revisionText(refusal: RevisionRefusal, by: RevisionBy): string {
  const subject = by === 'edit' ? '修改后的参数' : '它传入的参数'
  switch (refusal.kind) {
    case 'not_object': return `${subject}必须是 JSON 对象`
    case 'not_json': return `${subject}不是 JSON：${refusal.detail}`
    case 'too_large': return `${subject}有 ${refusal.length} 个字符，上限是 ${refusal.max}`
    case 'validation': return by === 'edit' ? validationText(refusal.problems) : `它把参数改写成了工具的模式不接受的值：${validationText(refusal.problems)}`
    case 'permission': return `${by === 'edit' ? '修改后' : '改写后'}的调用需要什么权限无法确定：${refusal.error}`
    case 'unknown_field': {
      const hint = refusal.suggestion === undefined ? '' : `——是不是想写 \`${refusal.suggestion}\`？`
      const known = refusal.names.length ? `那里的字段有：${refusal.names.map((name) => `\`${name}\``).join('、')}。` : ''
      return `修改后的参数在 ${refusal.path} 处设置了 \`${refusal.key}\`，这个工具的参数里没有这个字段${hint}${known}`
    }
    case 'not_editable': return '这个请求不接受修改参数'
    case 'check_failed': return `无法检查修改后的参数：${refusal.error}`
    case 'needs_approver': return `修改后的调用需要 ${refusal.approvers} 批准`
  }
}

function denialText(denial: Denial): string {
  switch (denial.cause) {
    case 'rule': return denial.decided ? decidedText(denial.decided) : '权限规则拒绝了它'
    case 'declined': return `${denial.by} 拒绝了${denial.reason ? `：${denial.reason}` : ''}`
    case 'expired': return `等待审批超时（${formatDurationFor(denial.timeoutMs, 'zh-CN', { parts: 2 })}内无人回答）`
    case 'cancelled': return denial.when === 'waiting' ? '等待审批时调用被取消了' : '询问审批之前调用就被取消了'
    case 'no_asker': return `它需要有人批准（${decidedText(denial.asked)}），但没有注册任何询问者：用 \`ctx.permissions.asker(...)\` 注册一个（见 docs/permissions.md）`
    case 'unreachable': return `无法询问任何人来${denial.elicitation ? `回答 ${denial.tool} 的问题` : `批准 ${denial.tool}`}（${denial.why.join('；')}）`
    case 'askers_failed': return `每个询问者都没能显示这个权限请求（最后的错误：${denial.error}）`
    case 'askers_unloaded': return '显示这个权限请求的询问者在有人回答之前都被卸载了'
    case 'answer_refused': return denial.approvers ? `${denial.by} 给出的批准不算数：只有${approversText(denial.approvers)}可以批准它` : `${denial.by} 给出的批准格式不对，不算数`
    case 'stopped':
      if (denial.kept) return '等待审批时被中断（请求已保存，重启后会再次询问）'
      return denial.when === 'waiting' ? '等待审批时权限服务停止了' : '权限服务已停止'
    case 'elsewhere': {
      const where = denial.instance ? `另一个实例（${denial.instance}）` : '另一个实例'
      return denial.closed !== undefined
        ? `请求已在${where}上关闭（${denial.closed}）`
        : `请求已在${where}上${denial.by ? `由 ${denial.by} ` : ''}回答；调用在那里运行，不在这里`
    }
    case 'edit_denied': return `${denial.by} 修改了参数，修改后的调用被拒绝：${denialText(denial.denial)}`
    case 'rewrite_denied': return `${middlewareName(denial)}改写了调用，改写后的调用被拒绝：${denialText(denial.denial)}`
    case 'no_service': return 'asked' in denial
      ? `没有加载权限服务来批准它（${denial.asked}）`
      : `没有加载权限服务，只能运行只读工具（改写后的调用属于${TERMS.effect[denial.effect]}类工具）`
    case 'check_failed': return `权限检查失败：${denial.error}`
    case 'no_decision': return `权限检查没有给出有效的决定（得到 ${denial.got}）`
    case 'unvalidated_edit': return '权限服务批准了未经流水线校验的参数'
    case 'not_approved': return '请求未获批准'
    case 'approval_changed': return `重启后批准的是 ${permissionText(denial.approved)}，但调用现在需要 ${permissionText(denial.needs)}`
    case 'tool': case 'middleware': case 'gate': return denial.reason
  }
}

function decidedText(cause: RuleCause | AskedFor): string {
  switch (cause.kind) {
    case 'rule': {
      const on = cause.target ?? cause.command
      const what = `${cause.permission}${on ? ` 作用于 ${on}` : ''}${cause.sandboxed === undefined ? '' : cause.sandboxed ? '，在沙箱内' : '，在沙箱外'}`
      return `来自 ${origin(cause.origin)} 的规则 ${cause.name ? `"${cause.name}"` : `（${what}）`}${VERB[cause.decision]}`
    }
    case 'mode': return `会话处于${TERMS.mode[cause.mode as keyof MessageTerms['mode']] ?? cause.mode}模式，这个模式${cause.decision === 'deny' ? '拒绝' : '允许'}${TERMS.effect[cause.effect]}类工具`
    case 'default': return cause.decision === 'allow' ? `没有匹配的规则；${TERMS.effect[cause.effect]}类工具默认允许` : `没有匹配的规则；${TERMS.effect[cause.effect]}类工具默认需要审批`
    case 'grant': return `${cause.by} 的「${TERMS.scope[cause.scope as keyof MessageTerms['scope']] ?? cause.scope}」授权允许了它（${cause.id}）`
    case 'malformed': return '调用没有给出有效的权限（需要权限名字符串、可选的目标字符串，以及带 `id` 的会话）'
    case 'tool': return cause.reason
  }
}

function permissionText(permission: Readonly<Pick<PermissionSpec, 'name' | 'target'>>): string {
  return permission.target === undefined ? `"${permission.name}"` : `"${permission.name}"（作用于 ${JSON.stringify(permission.target)}）`
}

function shown(value: ShownValue, typed: boolean): string {
  switch (value.type) {
    case 'string': return typed ? `字符串 ${value.text}` : value.text
    case 'number': return typed ? `数字 ${value.text}` : value.text
    case 'boolean': return typed ? `布尔值 \`${value.text}\`` : `\`${value.text}\``
    case 'bigint': return value.text
    case 'array': return `含 ${value.items} 项的数组`
    case 'null': case 'undefined': return `\`${value.type}\``
    case 'function': return '函数'
    case 'date': return '日期对象'
    case 'object': return '对象'
    case 'secret': return SECRET_MASK
  }
}

const KIND: Record<Extract<ExpectedValue, { type: string }>['type'], string> = {
  object: '应为对象', array: '应为数组', string: '应为字符串', number: '应为数字', boolean: '应为布尔值', function: '应为函数',
  nothing: '这里不应有值', flags: '应为数字或标志名数组',
}

const ROLE: Record<string, string> = { datetime: '日期时间', date: '日期', time: '时间', regexp: '正则表达式', link: '链接', secret: '密钥' }

function expectedText(expected: ExpectedValue): string {
  if ('type' in expected) return KIND[expected.type]
  if ('instanceOf' in expected) return `应为 \`${expected.instanceOf}\` 的实例`
  if ('constant' in expected) return `应为 ${expected.constant}`
  if ('schema' in expected) return `应符合 \`${expected.schema}\``
  return `应为有效的${ROLE[expected.role] ?? ` \`${expected.role}\``}`
}

function problemText(detail: IssueDetail): string {
  switch (detail.kind) {
    case 'required': return detail.params.property ? '缺少必填的属性' : '缺少必填的值'
    case 'type': return `${expectedText(detail.params.expected)}，实际是${shown(detail.params.got, true)}`
    case 'enum': return `必须是 ${detail.params.options.join('、')} 之一（实际是 ${shown(detail.params.got, false)}）`
    case 'flag': return `应为 ${detail.params.options.join('、')} 之一，实际是${shown(detail.params.got, true)}`
    case 'pattern': return `必须匹配模式 \`${detail.params.pattern}\`（实际是 ${shown(detail.params.got, false)}）`
    case 'max': return `应为不大于 ${detail.params.limit} 的数字，实际是 ${shown(detail.params.got, false)}`
    case 'min': return `应为不小于 ${detail.params.limit} 的数字，实际是 ${shown(detail.params.got, false)}`
    case 'step': {
      const { step, from, got } = detail.params
      const expected = step === 1 ? '应为整数' : `应为 ${Math.abs(step)} 的倍数${from ? `（从 ${from} 起算）` : ''}`
      return `${expected}，实际是 ${shown(got, false)}`
    }
    case 'max_length': return `最多 ${detail.params.limit} ${detail.params.unit === 'characters' ? '个字符' : '项'}，实际有 ${shown(detail.params.got, false)}`
    case 'min_length': return `至少 ${detail.params.limit} ${detail.params.unit === 'characters' ? '个字符' : '项'}，实际有 ${shown(detail.params.got, false)}`
    case 'property_name': return `属性名 ${detail.params.name} 无效：${problemText(detail.params.problem)}`
    case 'unknown_field': return `这里不允许这个属性（它的值是${shown(detail.params.got, true)}）`
    case 'convert': return `无法转换这个值（${detail.params.error}），它是${shown(detail.params.got, true)}`
    case 'other': return `值无效：${detail.params.message}`
  }
}

/** Who may answer, in Chinese: `调用者（mock:alice）`, `用户 mock:ops`, `持有 dogu.ops 权限的人`, `权限等级 ≥ 4 的用户`. */
function approversText(policy: ApproverPolicy): string {
  const who: string[] = []
  if (policy.userId !== undefined) who.push(`调用者（${policy.platform ? policy.platform + ':' : ''}${policy.userId}）`)
  if (policy.users?.length) who.push(`用户 ${policy.users.join('、')} `)
  if (policy.permissions?.length) who.push(`持有 ${policy.permissions.join('、')} 权限的人`)
  if (policy.authority !== undefined) who.push(`权限等级 ≥ ${policy.authority} 的用户`)
  return who.length ? ` ${who.join('或')} ` : '无人'
}
