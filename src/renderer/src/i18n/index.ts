import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import { en } from './en.ts';
import { zhCN } from './zh-cn.ts';

export const LANGUAGES = { en: 'English', 'zh-CN': '简体中文' } as const;
export type Language = keyof typeof LANGUAGES;

void i18n.use(initReactI18next).init({
  resources: { en: { translation: en }, 'zh-CN': { translation: zhCN } },
  lng: (localStorage.getItem('sb.lang') as Language | null) ?? (navigator.language.startsWith('zh') ? 'zh-CN' : 'en'),
  fallbackLng: 'en',
  interpolation: { escapeValue: false },
});

export { i18n };
