import type { enDeliveryActions } from './en-delivery-actions.ts';

/** Retry now, Cancel, why a delivery waits, and how a retry turned out: Simplified Chinese. */
export const zhCNDeliveryActions: typeof enDeliveryActions = {
  confirm: {
    title: '取消这条投递？',
    why: '这条回复将永远不会发送，且无法恢复。会话中排在它之后的回复随即发出。',
    keep: '保留',
  },
  retryNow: '立即重试',
  retryNowWhy: '现在额外尝试一次。若失败，下次尝试仍按当前间隔等待，重试计划不向后推进。',
  cancelDelivery: '取消投递',
  cancelWhy: '不再发送这条回复。会话中排在它之后的回复随即发出。',
  nextTry: '下次尝试 {{time}}',
  behindFailing: '正在等待之前一条投递失败的回复（下次尝试 {{time}}）',
  behindSending: '正在等待之前一条正在发送的回复',
  held: {
    failing: '投递：正在等待之前一条投递失败的回复（下次尝试 {{time}}）',
    sending: '投递：正在等待之前一条正在发送的回复',
  },
  reply: {
    failing: '回复已生成，正在等待之前一条投递失败的回复（下次尝试 {{time}}）',
    sending: '回复已生成，正在等待之前一条正在发送的回复',
  },
  sending: '发送中…',
  lineSending: '投递：发送中…',
  failedAgain: '再次失败',
  result: {
    delivered: '已重试：已送达',
    failed: '已重试：再次失败（{{why}}）',
    cancelled: '已重试，随后被取消',
  },
  summary_one: '已重试 {{count}} 条：{{parts}}',
  summary_other: '已重试 {{count}} 条：{{parts}}',
  part: {
    delivered_one: '{{count}} 条已送达',
    delivered_other: '{{count}} 条已送达',
    failed_one: '{{count}} 条再次失败（{{why}}）',
    failed_other: '{{count}} 条再次失败（{{why}}）',
    cancelled_one: '{{count}} 条期间被取消',
    cancelled_other: '{{count}} 条期间被取消',
    waiting_one: '{{count}} 条仍在等待',
    waiting_other: '{{count}} 条仍在等待',
  },
  separator: '，',
  queuedSending_one: '已重新排队 {{count}} 条投递。发送中…',
  queuedSending_other: '已重新排队 {{count}} 条投递。发送中…',
  cancelled: '已取消：那条回复不会再发送。',
  cancelledOnTheWire: '已取消：那条回复不会再次发送。有一次尝试已经发出，无法撤回：接收方仍可能收到它。其尝试记录会显示结果。',
  cancelledTryDelivered: '已取消，但已经发出的那次尝试已被接收方接受：回复已送达一次。它不会再次发送。',
  cancelledTryFailed: '已取消。已经发出的那次尝试未被接收方接受（{{why}}）。它不会再次发送。',
  about: '{{who}}：{{text}}',
  cancelledBy: '由 {{name}} 在控制台取消',
};
