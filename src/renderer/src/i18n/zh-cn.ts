import type { Messages } from './en.ts';

export const zhCN: Messages = {
  app: { title: 'Switchboard', endpoint: '接入地址', theme: '主题', light: '浅色', dark: '深色', language: '语言' },
  nav: { conversations: '会话', requests: '请求日志' },
  list: {
    search: '搜索消息 (/)',
    all: '全部',
    empty: '还没有会话。向接入地址发送一条签名消息，它会立即出现在这里。',
    noMatch: '没有符合筛选条件的会话。',
    state: { active: '自动回复中', paused: '已暂停', stopped: '已停止', needs_human: '需要人工' },
    channel: { im: 'IM', web: '网页' },
    messages: '{{count}} 条消息',
  },
  transcript: {
    pick: '请在左侧选择一个会话（j/k 切换）。',
    stop: '停止自动回复 (s)',
    resume: '恢复自动回复 (r)',
    role: { customer: '客户', staff: '客服', ai: 'AI', command: '指令' },
    reason: {
      scheduled: '已安排回复',
      sender_not_customer: '未回复：发送者不是客户',
      not_mentioned: '未回复：没有 @ 机器人',
      auto_reply_stopped: '未回复：自动回复已停止',
      auto_reply_paused: '未回复：自动回复已暂停（客服发言）',
      stale_message: '未回复：消息过旧',
      rate_limited: '未回复：一分钟内已回复 6 次',
    },
    outcome: { pending: '等待静默期', answered: '已回复', handoff: '已转人工', cancelled: '已取消', stale: '已过期' },
    delivery: '投递：{{state}}，尝试 {{attempts}} 次',
    retry: '重新投递',
    handoff: '没有把握的答案：需要人工',
    suggestion: '建议回复',
  },
  requests: { onlyFailed: '只看被拒绝的', empty: '还没有请求。', status: '状态', code: '错误码', client: '客户端', time: '时间', latency: '毫秒' },
  error: { generic: '出错了：{{message}}' },
};
