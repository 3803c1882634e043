import { useTranslation } from 'react-i18next';
import { i18n, LANGUAGES, type Language } from '../i18n/index.ts';

/** The console's language, remembered in this browser (the header's settings and the sign-in page). */
export function LanguageSelect({ className }: { className?: string }) {
  const { t } = useTranslation();
  return (
    <select
      className={className}
      aria-label={t('app.language')}
      value={i18n.language}
      onChange={(e) => {
        localStorage.setItem('sb.lang', e.target.value);
        void i18n.changeLanguage(e.target.value as Language);
      }}
    >
      {Object.entries(LANGUAGES).map(([code, name]) => (
        <option key={code} value={code}>
          {name}
        </option>
      ))}
    </select>
  );
}
